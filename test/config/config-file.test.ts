import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentConfig, loadKeelSettings } from '../../src/config/agent-config';
import { configuredWindow } from '../../src/config/configured-window';
import { ConfigError } from '../../src/config/keel-config';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'keel-config-'));
});
afterEach(async () => rm(dir, { recursive: true, force: true }));

/** Writes keel.config.json in the test's folder and loads it with `env` (KEEL_CONFIG unset: found in cwd). */
async function load(file: unknown, env: NodeJS.ProcessEnv = {}) {
  await writeFile(join(dir, 'keel.config.json'), typeof file === 'string' ? file : JSON.stringify(file));
  return loadKeelSettings({ env, cwd: dir });
}

async function loadError(file: unknown, env: NodeJS.ProcessEnv = {}): Promise<string> {
  try {
    await load(file, env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('keel.config.json errors name the JSON path and the fix', () => {
  it.each([
    [
      'an unknown provider',
      { agents: { support: { model: { provider: 'openia', id: 'x' } } } },
      /agents\.support\.model\.provider: use "anthropic" or "openai-compatible"/,
    ],
    [
      'an openai-compatible model without its endpoint',
      { agents: { support: { model: { provider: 'openai-compatible', id: 'llama3' } } } },
      /agents\.support\.model\.baseUrl: an openai-compatible model needs its endpoint: add "baseUrl"/,
    ],
    [
      'an endpoint without its provider',
      { model: { id: 'x', baseUrl: 'http://h:1' } },
      /model\.provider: an endpoint or key needs its provider/,
    ],
    [
      'a misspelt setting',
      { agents: { support: { modle: 'x' } } },
      /agents\.support\.modle: unknown setting \(check the spelling\); known settings here: identity, promptMode/,
    ],
    [
      'a misspelt model key',
      { agents: { support: { model: { provider: 'anthropic', name: 'x' } } } },
      /agents\.support\.model\.name: unknown setting .*known settings here: provider, id, baseUrl, apiKeyEnv/,
    ],
    [
      'a bad workspace access',
      { agents: { support: { workspaceAccess: 'write' } } },
      /agents\.support\.workspaceAccess: use "rw", "ro" or "none"/,
    ],
    [
      'a window that is not a number',
      { agents: { support: { contextTokens: '100k' } } },
      /agents\.support\.contextTokens: use a whole number of tokens/,
    ],
    ['a bad agent id', { agents: { 'sup port': {} } }, /agents\.sup port: agent ids are 1-64 of A-Z a-z 0-9 _ -/],
    [
      'an unknown work style',
      { agents: { support: { workStyle: 'chatty' } } },
      /agents\.support\.workStyle: use one of "tool-heavy", "conversational", "mixed", "bursty"/,
    ],
    [
      'a pruning TTL that is no duration',
      { agents: { support: { contextEngineOptions: { pruningTtl: 'soon' } } } },
      /agents\.support\.contextEngineOptions\.pruningTtl: use a duration such as "2m"/,
    ],
    [
      'a tool timeout that is no duration',
      { agents: { support: { toolTimeout: 'soon' } } },
      /agents\.support\.toolTimeout: use a duration such as "30s" or "5m"/,
    ],
    ['a tool timeout past a day', { toolTimeout: '30h' }, /toolTimeout: use at most "24h"/],
    [
      'a tool timeout of one tool that is not positive',
      { agents: { support: { toolTimeouts: { deploy: 0 } } } },
      /agents\.support\.toolTimeouts\.deploy: use a duration > 0/,
    ],
    [
      'an unknown reset mode',
      { agents: { support: { reset: { mode: 'weekly' } } } },
      /agents\.support\.reset\.mode: use "daily", "idle" or "none"/,
    ],
    [
      'a per-model window that is not positive',
      { models: { providers: { anthropic: { models: [{ id: 'm', contextWindow: 0 }] } } } },
      /models\.providers\.anthropic\.models\.0\.contextWindow: use tokens > 0/,
    ],
  ])('rejects %s', async (_name, file, expected) => {
    expect(await loadError(file)).toMatch(expected);
  });

  it('names the file and says when it is not JSON', async () => {
    expect(await loadError('{ "model": ')).toMatch(
      /invalid Keel configuration in .*keel\.config\.json:\n {2}\(file\): not valid JSON .*fix the syntax/,
    );
  });

  it('names the key variable an agent points at when it is not set', async () => {
    const file = {
      agents: {
        local: {
          model: {
            provider: 'openai-compatible',
            id: 'llama3',
            baseUrl: 'http://localhost:11434/v1',
            apiKeyEnv: 'OLLAMA_KEY',
          },
        },
      },
    };
    expect(await loadError(file)).toMatch(
      /agents\.local\.model\.apiKeyEnv: OLLAMA_KEY is not set in the environment; export it/,
    );
    expect(agentConfig(await load(file, { OLLAMA_KEY: 'secret' }), 'local').openAiApiKey).toBe('secret');
  });

  it('checks merged values against the schema, naming the agent setting (a bad time zone, output above the window)', async () => {
    expect(await loadError({ agents: { support: { reset: { timeZone: 'Mars/Olympus' } } } })).toMatch(
      /agents\.support\.reset\.timeZone: not a known IANA time zone/,
    );
    expect(await loadError({ maxOutputTokens: 20_000, agents: { support: { contextWindowTokens: 16_000 } } })).toMatch(
      /agents\.support \(inherited maxOutputTokens\): 20000 output tokens do not fit the 16000-token context window/,
    );
    expect(await loadError({ agents: { support: { reserveTokensFloor: -1 } } })).toMatch(
      /agents\.support\.reserveTokensFloor: use tokens ≥ 0/,
    );
  });

  it('takes a small local window and a reserve floor, at the top level and per agent', async () => {
    const settings = await load({
      reserveTokensFloor: 10_000,
      agents: {
        local: { contextWindowTokens: 4_000 },
        tight: { contextWindowTokens: 16_000, reserveTokens: 3_000, reserveTokensFloor: 0 },
      },
    });
    expect(settings.defaults.reserveTokensFloor).toBe(10_000);
    expect(agentConfig(settings, 'local')).toMatchObject({ contextWindowTokens: 4_000, reserveTokensFloor: 10_000 });
    expect(agentConfig(settings, 'tight')).toMatchObject({ reserveTokens: 3_000, reserveTokensFloor: 0 });
    expect(await loadError({ contextEngine: 'nope' })).toMatch(
      /keel\.config\.json: contextEngine: "nope" is not a registered context engine/,
    );
  });

  it('fails when KEEL_CONFIG names a missing file, and runs without a file otherwise', async () => {
    expect(() => loadKeelSettings({ env: { KEEL_CONFIG: 'missing.json' }, cwd: dir })).toThrow(
      /KEEL_CONFIG: .*missing\.json does not exist/,
    );
    const none = loadKeelSettings({ env: {}, cwd: dir });
    expect([none.file, none.agents.size, none.defaults.model]).toEqual([undefined, 0, 'claude-sonnet-4-6']);
  });
});

describe('precedence', () => {
  it('environment variables override the file top level; agent sections override both', async () => {
    const file = {
      model: 'file-model',
      maxOutputTokens: 1_000,
      identity: 'File identity',
      agents: { support: { model: 'support-model', identity: 'Support' }, quiet: {} },
    };
    const fromFile = await load(file);
    expect([fromFile.defaults.model, fromFile.defaults.maxOutputTokens, fromFile.defaults.identity]).toEqual([
      'file-model',
      1_000,
      'File identity',
    ]);
    const settings = await load(file, { KEEL_MODEL: 'env-model', KEEL_IDENTITY: 'Env identity' });
    expect([settings.defaults.model, settings.defaults.identity, settings.defaults.maxOutputTokens]).toEqual([
      'env-model',
      'Env identity',
      1_000,
    ]);
    expect([agentConfig(settings, 'support').model, agentConfig(settings, 'support').identity]).toEqual([
      'support-model',
      'Support',
    ]);
    // A section that sets nothing, and an agent without a section, get the defaults.
    expect(agentConfig(settings, 'quiet').model).toBe('env-model');
    expect(agentConfig(settings, 'unlisted')).toBe(settings.defaults);
  });

  it("reads the HTTP API's host and port from the file, under the environment; the token from the environment only", async () => {
    expect([(await load({})).defaults.apiHost, (await load({})).defaults.apiPort]).toEqual(['127.0.0.1', 8787]);
    const fromFile = await load({ apiHost: '0.0.0.0', apiPort: 9000 });
    expect([fromFile.defaults.apiHost, fromFile.defaults.apiPort]).toEqual(['0.0.0.0', 9000]);
    const fromEnv = await load(
      { apiHost: '0.0.0.0', apiPort: 9000 },
      { KEEL_API_PORT: '9100', KEEL_API_TOKEN: 'a-token-of-24-characters' },
    );
    expect([fromEnv.defaults.apiHost, fromEnv.defaults.apiPort, fromEnv.defaults.apiToken]).toEqual([
      '0.0.0.0',
      9100,
      'a-token-of-24-characters',
    ]);
    expect(await loadError({ apiPort: 70_000 })).toMatch(/apiPort: use a port from 0 to 65535/);
    expect(await loadError({ apiToken: 'in-the-file-0123456789' })).toMatch(/apiToken: unknown setting/);
    expect(await loadError({}, { KEEL_API_TOKEN: 'short' })).toMatch(/KEEL_API_TOKEN: use at least 16 characters/);
  });

  it('an env error still names the variable, a file error the JSON path', async () => {
    expect(await loadError({ maxOutputTokens: 1_000 }, { KEEL_MAX_OUTPUT_TOKENS: 'lots' })).toMatch(
      /KEEL_MAX_OUTPUT_TOKENS: /,
    );
    expect(await loadError({ resetHour: 3 })).toMatch(/resetHour: unknown setting/);
  });

  it('takes the Temporal TLS settings: certificate paths against the file, the API key from the variable it names', async () => {
    const settings = await load(
      {
        temporalAddress: 'ns.acct.tmprl.cloud:7233',
        temporalNamespace: 'ns.acct',
        temporalTlsCaPath: 'certs/ca.pem',
        temporalTlsCertPath: 'certs/client.pem',
        temporalTlsKeyPath: 'certs/client.key',
        temporalTlsServerName: 'temporal.internal',
        temporalApiKeyEnv: 'CLOUD_KEY',
      },
      { CLOUD_KEY: 'secret' },
    );
    const c = settings.defaults;
    expect([
      c.temporalNamespace,
      c.temporalTlsCaPath,
      c.temporalTlsCertPath,
      c.temporalTlsKeyPath,
      c.temporalTlsServerName,
      c.temporalApiKey,
    ]).toEqual([
      'ns.acct',
      join(dir, 'certs/ca.pem'),
      join(dir, 'certs/client.pem'),
      join(dir, 'certs/client.key'),
      'temporal.internal',
      'secret',
    ]);
    // The environment overrides the file, under Temporal's own names.
    expect(
      (await load({ temporalTlsCaPath: 'certs/ca.pem' }, { TEMPORAL_TLS_SERVER_CA_CERT_PATH: '/etc/ca.pem' })).defaults
        .temporalTlsCaPath,
    ).toBe('/etc/ca.pem');
    expect(await loadError({ temporalApiKeyEnv: 'CLOUD_KEY' })).toContain(
      'temporalApiKeyEnv: CLOUD_KEY is not set in the environment',
    );
    expect(await loadError({ temporalTls: 'yes' })).toContain('temporalTls: use true or false');
  });

  it('resolves workspace and tools paths against the file, and maps the reset policy and engine options', async () => {
    const settings = await load({
      agents: {
        ops: {
          workspace: 'ws/ops',
          workspaceAccess: 'ro',
          tools: 'tools/ops.js',
          reset: { mode: 'idle', idleMinutes: 30 },
          contextEngine: 'budgeted',
          contextEngineOptions: { keepLastAssistants: 5 },
        },
      },
    });
    const ops = agentConfig(settings, 'ops');
    expect([ops.workspaceDir, ops.workspaceAccess, ops.toolsModule]).toEqual([
      join(dir, 'ws/ops'),
      'ro',
      join(dir, 'tools/ops.js'),
    ]);
    expect([ops.resetMode, ops.idleMinutes, ops.contextEngine, ops.contextEngineOptions]).toEqual([
      'idle',
      30,
      'budgeted',
      { keepLastAssistants: 5 },
    ]);
  });

  it('a work style fills the four settings the section leaves unset; explicit fields win, "2m" is milliseconds', async () => {
    const settings = await load({
      workStyle: 'conversational',
      agents: {
        ops: { workStyle: 'tool-heavy' },
        dev: { workStyle: 'mixed', reserveTokens: 40_000, contextEngineOptions: { pruningTtl: '90s' } },
        custom: { contextEngine: 'legacy', workStyle: 'bursty' },
      },
    });
    const ops = agentConfig(settings, 'ops');
    expect([ops.workStyle, ops.reserveTokens, ops.contextEngine, ops.contextEngineOptions]).toEqual([
      'tool-heavy',
      60_000,
      'budgeted',
      { pruningTtl: 60_000, keepLastAssistants: 1, minPrunableToolChars: 10_000 },
    ]);
    const dev = agentConfig(settings, 'dev');
    expect([dev.reserveTokens, dev.contextEngineOptions]).toEqual([
      40_000,
      { pruningTtl: 90_000, keepLastAssistants: 2, minPrunableToolChars: 10_000 },
    ]);
    expect(agentConfig(settings, 'custom').contextEngine).toBe('legacy');
    // Any other agent gets the top level's style.
    expect([settings.defaults.reserveTokens, settings.defaults.contextEngineOptions]).toEqual([
      30_000,
      { pruningTtl: 300_000, keepLastAssistants: 3, minPrunableToolChars: 50_000 },
    ]);
  });

  it('tool timeouts: the top level for every agent, an agent section for its own, durations in milliseconds', async () => {
    const settings = await load({
      toolTimeout: '2m',
      agents: { ops: { toolTimeout: '30s', toolTimeouts: { deploy: '15m', ping: 500 } }, dev: {} },
    });
    const ops = agentConfig(settings, 'ops');
    expect([ops.toolTimeoutMs, ops.toolTimeouts]).toEqual([30_000, { deploy: 900_000, ping: 500 }]);
    expect([agentConfig(settings, 'dev').toolTimeoutMs, agentConfig(settings, 'other').toolTimeoutMs]).toEqual([
      120_000, 120_000,
    ]);
    expect((await load({}, { KEEL_TOOL_TIMEOUT_MS: '45000' })).defaults.toolTimeoutMs).toBe(45_000);
    expect((await load({})).defaults.toolTimeoutMs).toBe(300_000);
    expect(await loadError({}, { KEEL_TOOL_TIMEOUT_MS: 'later' })).toMatch(
      /KEEL_TOOL_TIMEOUT_MS: use a duration such as "30s"/,
    );
  });

  it('a provider named by an agent replaces the inherited endpoint', async () => {
    const settings = await load({
      compactionModel: { provider: 'openai-compatible', id: 'llama3', baseUrl: 'http://ollama:11434/v1' },
      agents: {
        cloud: { compactionModel: { provider: 'anthropic', id: 'claude-haiku-4-5' } },
        local: { model: { provider: 'openai-compatible', id: 'qwen', baseUrl: 'http://vllm:8000' } },
      },
    });
    const cloud = agentConfig(settings, 'cloud');
    expect([cloud.compactionModel, cloud.compactionModelProvider, cloud.compactionModelUrl]).toEqual([
      'claude-haiku-4-5',
      'anthropic',
      undefined,
    ]);
    const local = agentConfig(settings, 'local');
    expect([local.model, local.modelProvider, local.openAiBaseUrl, local.compactionModelUrl]).toEqual([
      'qwen',
      'openai-compatible',
      'http://vllm:8000',
      'http://ollama:11434/v1',
    ]);
  });

  it("a local server's limits: tool turns unstreamed and one request at a time, per model spec", async () => {
    const settings = await load({
      model: {
        provider: 'openai-compatible',
        id: 'gemma',
        baseUrl: 'http://127.0.0.1:8080/v1',
        streamToolTurns: false,
        maxConcurrentRequests: 2,
      },
    });
    expect([settings.defaults.openAiStreamToolTurns, settings.defaults.openAiMaxConcurrentRequests]).toEqual([
      false,
      2,
    ]);
    expect(
      await loadError({
        model: { provider: 'openai-compatible', id: 'g', baseUrl: 'http://h:1', maxConcurrentRequests: 0 },
      }),
    ).toMatch(/maxConcurrentRequests: use 1 or more requests/);
  });
});

describe('context window resolution (per-provider model entry → catalog → agent contextTokens cap → default)', () => {
  const models = {
    providers: {
      anthropic: {
        models: [
          { id: 'big', contextWindow: 1_000_000 },
          { id: 'small', contextWindow: 50_000 },
        ],
      },
      'openai-compatible': { models: [{ id: 'big', contextWindow: 32_000 }] },
    },
  };

  it.each([
    ['the default', {}, 'claude-sonnet-4-6', { tokens: 200_000, source: 'default' }],
    [
      'the default set by contextWindowTokens',
      { contextWindowTokens: 120_000 },
      'claude-sonnet-4-6',
      { tokens: 120_000, source: 'default' },
    ],
    [
      'the model entry over the default',
      { contextWindowTokens: 120_000 },
      'big',
      { tokens: 1_000_000, source: 'config' },
    ],
    [
      'the cap under the model entry',
      { contextTokens: 100_000 },
      'big',
      { tokens: 100_000, source: 'agentContextTokens' },
    ],
    ['a cap never raises', { contextTokens: 100_000 }, 'small', { tokens: 50_000, source: 'config' }],
    [
      "the entry of the agent's provider",
      { model: { provider: 'openai-compatible', id: 'big', baseUrl: 'http://h:1/v1' } },
      'big',
      { tokens: 32_000, source: 'config' },
    ],
  ])('%s', async (_name, agent, model, expected) => {
    const settings = await load({ models, agents: { a: agent } });
    expect(configuredWindow(agentConfig(settings, 'a'), model)).toEqual(expected);
  });

  it('the environment window is the default the file top level and agents start from', async () => {
    const settings = await load(
      { models, contextWindowTokens: 150_000, agents: { a: { contextTokens: 90_000 } } },
      { KEEL_CONTEXT_WINDOW: '80000' },
    );
    expect(configuredWindow(settings.defaults)).toEqual({ tokens: 80_000, source: 'default' });
    expect(configuredWindow(agentConfig(settings, 'a'))).toEqual({ tokens: 80_000, source: 'default' });
    expect(configuredWindow(agentConfig(settings, 'a'), 'big')).toEqual({
      tokens: 90_000,
      source: 'agentContextTokens',
    });
  });
});

describe('the README example', () => {
  it('loads, and resolves as the README explains', async () => {
    const readme = await readFile(join(__dirname, '../../README.md'), 'utf8');
    const example = /## Configuration file \(agents\)[\s\S]*?```json\n([\s\S]*?)```/.exec(readme)![1]!;
    const support = agentConfig(await load(example, { OLLAMA_API_KEY: 'k' }), 'support');
    expect([support.modelProvider, support.model, support.openAiApiKey, support.compactionModelProvider]).toEqual([
      'openai-compatible',
      'qwen3:32b',
      'k',
      'anthropic',
    ]);
    expect(configuredWindow(support)).toEqual({ tokens: 24_000, source: 'agentContextTokens' });
  });
});
