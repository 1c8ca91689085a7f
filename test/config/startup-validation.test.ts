import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, configFromEnv } from '../../src/config/keel-config';
import { validateStartup } from '../../src/config/validate-startup';
import { registerContextEngine } from '../../src/engine/registry';
import { LegacyContextEngine } from '../../src/engine/legacy';
import { storeTargetFor } from '../../src/store/connect';
import { loggerOptionsFromEnv } from '../../src/observability/logger';
import { maxOutputTokensFor, reserveForWindow } from '../../src/context/context-window';

function configError(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('configFromEnv checks the whole configuration', () => {
  it('rejects an unregistered context engine, naming KEEL_CONTEXT_ENGINE and the registered ids', () => {
    const message = configError(() => configFromEnv({ KEEL_CONTEXT_ENGINE: 'nope' }));
    expect(message).toMatch(
      /KEEL_CONTEXT_ENGINE: "nope" is not a registered context engine; use one of legacy, budgeted/,
    );
  });

  it('accepts the built-in engines and one the application registered first', () => {
    expect(configFromEnv({}).contextEngine).toBe('legacy');
    expect(configFromEnv({ KEEL_CONTEXT_ENGINE: 'budgeted' }).contextEngine).toBe('budgeted');
    const unregister = registerContextEngine('app-engine', () => new LegacyContextEngine());
    try {
      expect(configFromEnv({ KEEL_CONTEXT_ENGINE: 'app-engine' }).contextEngine).toBe('app-engine');
    } finally {
      unregister();
    }
  });

  it('accepts a small local window: the reserve takes half of it, the default output half of that', () => {
    const config = configFromEnv({ KEEL_CONTEXT_WINDOW: '4000' });
    expect(reserveForWindow(4_000, config)).toBe(2_000);
    expect(maxOutputTokensFor(4_000, config)).toBe(1_000);
    expect(
      configFromEnv({ KEEL_CONTEXT_WINDOW: '16000', KEEL_RESERVE_TOKENS: '3000', KEEL_RESERVE_TOKENS_FLOOR: '0' }),
    ).toMatchObject({ reserveTokens: 3_000, reserveTokensFloor: 0 });
  });

  it('reads the summary window share from KEEL_SUMMARY_MAX_WINDOW_SHARE, 0.04 by default, and names the variable and the range when it is out of bounds', () => {
    expect(configFromEnv({}).summaryMaxWindowShare).toBe(0.04);
    expect(configFromEnv({ KEEL_SUMMARY_MAX_WINDOW_SHARE: '0.1' }).summaryMaxWindowShare).toBe(0.1);
    expect(configError(() => configFromEnv({ KEEL_SUMMARY_MAX_WINDOW_SHARE: '0.6' }))).toMatch(
      /KEEL_SUMMARY_MAX_WINDOW_SHARE.*a share from 0\.005 to 0\.25/,
    );
  });

  it.each([
    ['a reserve floor that is not a count', { KEEL_RESERVE_TOKENS_FLOOR: '-1' }, /KEEL_RESERVE_TOKENS_FLOOR: /],
    [
      'output larger than the window',
      { KEEL_CONTEXT_WINDOW: '30000', KEEL_MAX_OUTPUT_TOKENS: '30000' },
      /KEEL_MAX_OUTPUT_TOKENS: 30000 output tokens do not fit/,
    ],
    [
      'a summarizer model without its endpoint',
      { KEEL_COMPACTION_MODEL: 'llama3' },
      /KEEL_COMPACTION_MODEL: .*KEEL_COMPACTION_MODEL_URL .* is not set/,
    ],
  ])('rejects incoherent model settings: %s', (_name, env, expected) => {
    expect(configError(() => configFromEnv(env))).toMatch(expected);
  });
});

describe('validateStartup', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'keel-startup-'));
    await writeFile(join(dir, 'good-tools.js'), 'exports.registerTools = () => {};\n');
    await writeFile(join(dir, 'no-register.js'), 'exports.somethingElse = 1;\n');
    await writeFile(join(dir, 'broken.js'), 'throw new Error("cannot load me");\n');
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));
  const config = configFromEnv({ ANTHROPIC_API_KEY: 'k' });

  it('accepts a tools module that exports registerTools', async () => {
    await expect(
      validateStartup(config, { toolsModule: join(dir, 'good-tools.js'), requireModel: true }),
    ).resolves.toBeUndefined();
  });

  it.each([
    ['a missing module', 'missing.js', /KEEL_TOOLS_MODULE: .*missing\.js does not exist/],
    [
      'a module without registerTools',
      'no-register.js',
      /KEEL_TOOLS_MODULE: .*does not export a registerTools\(registry\) function/,
    ],
    ['a module that throws on load', 'broken.js', /KEEL_TOOLS_MODULE: .*failed to load: cannot load me/],
  ])('rejects %s, naming KEEL_TOOLS_MODULE', async (_name, file, expected) => {
    await expect(validateStartup(config, { toolsModule: join(dir, file), requireModel: false })).rejects.toThrow(
      expected,
    );
  });

  it("checks each agent's own tools module, naming the agent's config file setting", async () => {
    const agents = new Map([
      ['support', { ...config, toolsModule: join(dir, 'good-tools.js') }],
      ['ops', { ...config, toolsModule: join(dir, 'missing.js') }],
    ]);
    await expect(validateStartup(config, { requireModel: false, agents })).rejects.toThrow(
      /^invalid Keel configuration:\n {2}agents\.ops\.tools: .*missing\.js does not exist$/,
    );
  });

  it('requires a model when asked to (workers), naming the variables', async () => {
    await expect(validateStartup(configFromEnv({}), { requireModel: true })).rejects.toThrow(
      /ANTHROPIC_API_KEY: not set, and neither is ANTHROPIC_BASE_URL/,
    );
    await expect(validateStartup(configFromEnv({}), { requireModel: false })).resolves.toBeUndefined();
  });
});

describe('KEEL_DATABASE_POOL_SIZE', () => {
  it('sizes the PostgreSQL pool a process opens (10 unless set) and refuses 0 naming the variable', () => {
    const url = 'postgres://keel@db/keel';
    expect(storeTargetFor(configFromEnv({ DATABASE_URL: url }))).toEqual({ kind: 'postgres', url, maxConnections: 10 });
    expect(storeTargetFor(configFromEnv({ DATABASE_URL: url, KEEL_DATABASE_POOL_SIZE: '25' }))).toEqual({
      kind: 'postgres',
      url,
      maxConnections: 25,
    });
    expect(configError(() => configFromEnv({ KEEL_DATABASE_POOL_SIZE: '0' }))).toMatch(
      /KEEL_DATABASE_POOL_SIZE.*at least 1/,
    );
  });
});

describe('KEEL_DATABASE_PREPARED_STATEMENTS', () => {
  it('prepares the hot statements unless switched off (for a pooler that cannot keep them)', () => {
    const url = 'postgres://keel@db/keel';
    expect(storeTargetFor(configFromEnv({ DATABASE_URL: url, KEEL_DATABASE_PREPARED_STATEMENTS: 'on' }))).toEqual({
      kind: 'postgres',
      url,
      maxConnections: 10,
    });
    for (const off of ['off', 'false', '0']) {
      expect(storeTargetFor(configFromEnv({ DATABASE_URL: url, KEEL_DATABASE_PREPARED_STATEMENTS: off }))).toEqual({
        kind: 'postgres',
        url,
        maxConnections: 10,
        preparedStatements: false,
      });
    }
  });
});

describe('on/off variables share one grammar', () => {
  const switches = {
    KEEL_PROMPT_CACHING: 'promptCaching',
    KEEL_WORKSPACE_WATCH: 'workspaceWatch',
    KEEL_DATABASE_PREPARED_STATEMENTS: 'databasePreparedStatements',
    KEEL_ENCRYPT_AT_REST: 'encryptAtRest',
  } as const;
  // Encryption at rest needs keys to be switched on at all.
  const keys = { KEEL_ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 7).toString('base64')}` };

  it('reads on/off, true/false, 1/0 and yes/no the same way in every switch, whatever the case', () => {
    for (const [variable, field] of Object.entries(switches)) {
      for (const word of ['on', 'true', '1', 'yes', 'ON', ' Yes '])
        expect({ variable, word, value: configFromEnv({ ...keys, [variable]: word })[field] }).toEqual({
          variable,
          word,
          value: true,
        });
      for (const word of ['off', 'false', '0', 'no', 'OFF', 'No'])
        expect({ variable, word, value: configFromEnv({ ...keys, [variable]: word })[field] }).toEqual({
          variable,
          word,
          value: false,
        });
    }
  });

  it('refuses any other word naming the variable and the words, where it used to guess (KEEL_ENCRYPT_AT_REST=enabled meant plaintext, KEEL_PROMPT_CACHING=0 meant on)', () => {
    for (const variable of Object.keys(switches)) {
      expect(configError(() => configFromEnv({ ...keys, [variable]: 'enabled' }))).toContain(
        `${variable}: use on or off (also true/false, 1/0, yes/no), not "enabled"`,
      );
    }
  });

  it('an unset or empty switch keeps its default', () => {
    expect(configFromEnv({ KEEL_PROMPT_CACHING: '', KEEL_ENCRYPT_AT_REST: '' })).toMatchObject({
      promptCaching: true,
      encryptAtRest: false,
      workspaceWatch: true,
      databasePreparedStatements: true,
    });
  });

  it('KEEL_LOG_PRETTY takes the same words and refuses others by name', () => {
    expect(loggerOptionsFromEnv({ KEEL_LOG_PRETTY: 'yes' })).toEqual({ pretty: true });
    expect(loggerOptionsFromEnv({ KEEL_LOG_PRETTY: 'off' }, { pretty: true })).toEqual({ pretty: false });
    expect(loggerOptionsFromEnv({}, { pretty: true })).toEqual({ pretty: true });
    expect(configError(() => loggerOptionsFromEnv({ KEEL_LOG_PRETTY: 'colour' }))).toBe(
      'KEEL_LOG_PRETTY: use on or off (also true/false, 1/0, yes/no), not "colour"',
    );
  });
});
