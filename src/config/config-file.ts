/**
 * The configuration file `keel.config.json` (path from KEEL_CONFIG, else `./keel.config.json` when
 * present): top-level settings are every agent's defaults, `agents.<agentId>` sections override them
 * for one agent. Parsed here into `KeelConfig` values plus, for each value, its JSON path in the file,
 * so every error names the setting to fix.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { ConfigError, type ConfigFileValues, type KeelConfig } from './keel-config';
import { parseByteSize, SETTINGS, type SettingKey } from './settings-table';
import { WORK_STYLE_PRESETS, WORK_STYLES } from '../context/work-style-presets';
import { thinkingLevelSchema } from './setting-schemas';
import { jsonErrorAt } from './json-error-position';
import { shownSettingValue, valueAtPath } from './shown-setting-value';

/** Agent ids follow the session-key name rule, so `agent:<id>:…` keys can name them. */
const AGENT_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const count = (what: string) =>
  z.number({ message: `use a whole number of ${what}` }).int(`use a whole number of ${what}`);
const provider = z.enum(['anthropic', 'openai-compatible'], { message: 'use "anthropic" or "openai-compatible"' });

/** A model: `"<model id>"` (at the default provider) or an object naming provider, endpoint and key variable. */
const modelSpecSchema = z.preprocess(
  (v) => (typeof v === 'string' ? { id: v } : v),
  z
    .strictObject(
      {
        provider: provider.optional(),
        id: z
          .string({ message: 'name the model id, e.g. "claude-sonnet-4-6"' })
          .min(1, 'name the model id, e.g. "claude-sonnet-4-6"'),
        baseUrl: z.url({ message: 'use the endpoint\'s http(s) URL, e.g. "http://localhost:11434/v1"' }).optional(),
        apiKeyEnv: z
          .string()
          .regex(
            ENV_NAME,
            'name the environment variable that holds the key, e.g. "OLLAMA_API_KEY" (never the key itself)',
          )
          .optional(),
        /** openai-compatible: stream replies that may call tools (off for a server that cannot stream a tool choice). */
        streamToolTurns: z.boolean({ message: 'use true or false' }).optional(),
        /** openai-compatible: requests in flight at once per worker process (default 1 on a loopback URL, else no limit). */
        maxConcurrentRequests: count('requests').positive('use 1 or more requests').optional(),
      },
      {
        message:
          'use a model id string or { "provider", "id", "baseUrl", "apiKeyEnv", "streamToolTurns", "maxConcurrentRequests" }',
      },
    )
    .superRefine((m, ctx) => {
      if (!m.provider && (m.baseUrl || m.apiKeyEnv)) {
        ctx.addIssue({
          code: 'custom',
          path: ['provider'],
          message: 'an endpoint or key needs its provider: add "provider": "anthropic" or "openai-compatible"',
        });
      }
      if (m.provider === 'openai-compatible' && !m.baseUrl) {
        ctx.addIssue({
          code: 'custom',
          path: ['baseUrl'],
          message: 'an openai-compatible model needs its endpoint: add "baseUrl", e.g. "http://localhost:11434/v1"',
        });
      }
    }),
);

const memoryFlushSchema = z.strictObject({
  enabled: z.boolean({ message: 'use true or false' }).optional(),
  prompt: z.string().min(1, 'write the instruction, or leave the key out').optional(),
  systemPrompt: z.string().min(1, 'write the text, or leave the key out').optional(),
});

const resetSchema = z.strictObject({
  mode: z.enum(['daily', 'idle', 'none'], { message: 'use "daily", "idle" or "none"' }).optional(),
  atHour: count('hours').min(0, 'use an hour from 0 to 23').max(23, 'use an hour from 0 to 23').optional(),
  timeZone: z.string().optional(),
  idleMinutes: count('minutes').positive('use minutes > 0').optional(),
});

/** What an agent section may set; the top level sets the same as every agent's default. */
const agentSettingsShape = {
  identity: z.string().min(1, 'write the identity line, or leave the key out'),
  promptMode: z.enum(['full', 'minimal', 'none'], { message: 'use "full", "minimal" or "none"' }),
  userTimeZone: z.string(),
  promptCaching: z.boolean({ message: 'use true or false' }),
  compactionPromptCache: z.boolean({ message: 'use true or false' }),
  subagentMaxDepth: count('levels').nonnegative('use levels ≥ 0 (0 turns spawning off)'),
  subagentMaxChildren: count('subagents').positive('use a count > 0'),
  subagentAllowAgents: z.array(z.string().min(1, 'use agent ids, or "*" for any'), {
    message: 'use a list of agent ids: ["researcher", "writer"], or ["*"] for any',
  }),
  workspace: z.string().min(1, 'name the workspace folder (relative to this file), or leave the key out'),
  workspaceAccess: z.enum(['rw', 'ro', 'none'], { message: 'use "rw", "ro" or "none"' }),
  model: modelSpecSchema,
  compactionModel: modelSpecSchema,
  embeddings: z.strictObject(
    {
      baseUrl: z.url('use the http(s) root of an OpenAI-compatible /v1/embeddings endpoint'),
      model: z.string().min(1, 'name the embedding model'),
      apiKeyEnv: z.string().min(1).optional(),
    },
    { message: 'use { "baseUrl": "http://127.0.0.1:11434/v1", "model": "nomic-embed-text", "apiKeyEnv": "…" }' },
  ),
  memoryFlushModel: z.string().min(1),
  thinkingLevel: thinkingLevelSchema,
  maxOutputTokens: count('tokens').positive('use tokens > 0'),
  contextTokens: count('tokens').positive('use tokens > 0'),
  contextWindowTokens: count('tokens').positive('use tokens > 0'),
  reserveTokens: count('tokens').nonnegative('use tokens ≥ 0'),
  reserveTokensFloor: count('tokens').nonnegative('use tokens ≥ 0 (0 turns the floor off)'),
  smallWindowTokens: count('tokens').nonnegative('use tokens ≥ 0 (0 turns the small-window mode off)'),
  softThresholdTokens: count('tokens').nonnegative('use tokens ≥ 0'),
  keepRecentTokens: count('tokens').nonnegative('use tokens ≥ 0 (0: a hard checkpoint)'),
  backgroundCompactionShare: z
    .number({ message: 'use a share from 0 to 0.95 (0 turns background compaction off)' })
    .min(0, 'use a share from 0 to 0.95 (0 turns background compaction off)')
    .max(0.95, 'use a share from 0 to 0.95 (0 turns background compaction off)'),
  tools: z.string().min(1, 'name the module exporting registerTools(registry), relative to this file'),
  toolTimeout: z.union([count('milliseconds'), z.string()], {
    message: 'use a duration such as "30s" or "5m" (or milliseconds)',
  }),
  toolTimeouts: z.record(z.string(), z.union([count('milliseconds'), z.string()]), {
    message: 'use an object of tool names and durations: { "<tool>": "10m" }',
  }),
  runBudget: z.strictObject(
    {
      maxModelCalls: z
        .union([count('model calls').min(2, 'use model calls ≥ 2 (one is the report), or null for no limit'), z.null()])
        .optional(),
      maxTokens: z.union([count('tokens').positive('use tokens > 0, or null for no limit'), z.null()]).optional(),
    },
    { message: 'use { "maxModelCalls": <calls or null>, "maxTokens": <tokens or null> }' },
  ),
  approvals: z.strictObject(
    {
      tools: z.array(z.string()).optional(),
      timeout: z.union([count('milliseconds'), z.string()]).optional(),
      approvers: z.array(z.string()).optional(),
    },
    { message: 'use { "tools": ["send_*"], "timeout": "24h", "approvers": ["ops"] }' },
  ),
  contextEngine: z.string().min(1),
  compactionProvider: z.string().min(1),
  contextEngineOptions: z.record(z.string(), z.unknown(), { message: 'use an object of engine options' }),
  workStyle: z.enum(WORK_STYLES, { message: `use one of ${WORK_STYLES.map((w) => `"${w}"`).join(', ')}` }),
  historyLimits: z.unknown(),
  reset: resetSchema,
  memoryFlush: memoryFlushSchema,
  maxActiveTranscriptBytes: z.union([count('bytes').nonnegative('use bytes ≥ 0'), z.string()], {
    message: 'use a number of bytes or a size such as "20mb"',
  }),
};
const agentSettingsSchema = z.strictObject(agentSettingsShape).partial();
type AgentSettings = z.output<typeof agentSettingsSchema>;

/**
 * Settings of the worker process as a whole (Temporal, the HTTP API, maintenance, models): the top
 * level sets them, agent sections cannot.
 */
const processSettingsShape = {
  temporalAddress: z.string().min(1),
  temporalNamespace: z.string().min(1),
  temporalTls: z.boolean({ message: 'use true or false' }),
  temporalTlsCaPath: z.string().min(1, 'name the CA certificate (PEM) file, relative to this file'),
  temporalTlsCertPath: z.string().min(1, 'name the client certificate (PEM) file, relative to this file'),
  temporalTlsKeyPath: z.string().min(1, 'name the client key (PEM) file, relative to this file'),
  temporalTlsServerName: z.string().min(1),
  temporalApiKeyEnv: z
    .string()
    .regex(
      ENV_NAME,
      'name the environment variable that holds the API key, e.g. "TEMPORAL_CLOUD_API_KEY" (never the key itself)',
    ),
  taskQueue: z.string().min(1),
  home: z.string().min(1),
  maintenanceMode: z.enum(['warn', 'enforce'], { message: 'use "warn" or "enforce"' }),
  modelIdleTimeoutMs: count('milliseconds').positive('use milliseconds > 0'),
  shutdownGraceMs: count('milliseconds').nonnegative('use milliseconds ≥ 0'),
  workspacePollSeconds: z.number().nonnegative('use seconds ≥ 0 (0 disables polling)'),
  apiPort: count('port').min(0, 'use a port from 0 to 65535').max(65535, 'use a port from 0 to 65535'),
  apiHost: z.string().min(1, 'name the address to bind, e.g. "127.0.0.1"'),
  models: z.strictObject({
    providers: z.record(
      z.string(),
      z.strictObject({
        models: z
          .array(
            z.strictObject({
              id: z.string().min(1, 'name the model id'),
              contextWindow: count('tokens').positive('use tokens > 0').optional(),
            }),
          )
          .optional(),
      }),
    ),
  }),
};
/** Agent settings the file writes under their own names (settings-table.ts), taken as they are. */
const PLAIN_AGENT_KEYS = (Object.keys(SETTINGS) as SettingKey[]).filter(
  (key) => SETTINGS[key].file === key && key in agentSettingsShape,
);
/** The process settings' keys, in the file's order. */
const PROCESS_KEYS = Object.keys(processSettingsShape) as (keyof typeof processSettingsShape)[];
/** Process settings that name a file: resolved against the config file's folder, as tools and workspace are. */
const FILE_PATH_KEYS: ReadonlySet<string> = new Set(['temporalTlsCaPath', 'temporalTlsCertPath', 'temporalTlsKeyPath']);

const fileSchema = z
  .strictObject({
    ...agentSettingsShape,
    ...processSettingsShape,
    agents: z.record(z.string(), agentSettingsSchema, {
      message: 'use an object of agent sections: { "<agentId>": { … } }',
    }),
  })
  .partial()
  .superRefine((file, ctx) => {
    for (const id of Object.keys(file.agents ?? {})) {
      if (!AGENT_ID.test(id))
        ctx.addIssue({
          code: 'custom',
          path: ['agents', id],
          message: 'agent ids are 1-64 of A-Z a-z 0-9 _ -, starting with a letter or digit (as in agent:<id>:main)',
        });
    }
  });

const SECTION_KEYS: Record<string, string[]> = {
  top: Object.keys(fileSchema.shape),
  agent: Object.keys(agentSettingsShape),
  model: ['provider', 'id', 'baseUrl', 'apiKeyEnv'],
  reset: Object.keys(resetSchema.shape),
  memoryFlush: Object.keys(memoryFlushSchema.shape),
};

/** One section of the file (the top level or an agent) as KeelConfig values, each with its JSON path. */
export interface ConfigSection {
  readonly values: Partial<Record<keyof KeelConfig, unknown>>;
  readonly names: Partial<Record<string, string>>;
}

/** The parsed file: the defaults and each agent's section. */
export interface ConfigFile {
  readonly path: string;
  readonly defaults: ConfigFileValues;
  readonly agents: ReadonlyMap<string, ConfigSection>;
}

/** Where the config file is: KEEL_CONFIG (must exist), else `./keel.config.json` if present, else none. */
export function configFilePath(env: NodeJS.ProcessEnv, cwd: string): string | undefined {
  if (env.KEEL_CONFIG) {
    const path = resolve(cwd, env.KEEL_CONFIG);
    if (!existsSync(path))
      throw new ConfigError(
        `invalid Keel configuration:\n  KEEL_CONFIG: ${path} does not exist; point it at your keel.config.json or unset it`,
      );
    return path;
  }
  const local = resolve(cwd, 'keel.config.json');
  return existsSync(local) ? local : undefined;
}

/** Reads and validates the config file; undefined when there is none. Throws ConfigError naming each bad setting's JSON path. */
export function readConfigFile(
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): ConfigFile | undefined {
  const path = configFilePath(env, cwd);
  if (!path) return undefined;
  const fail = (lines: string[]) =>
    new ConfigError(`invalid Keel configuration in ${path}:\n${lines.map((l) => `  ${l}`).join('\n')}`);
  let json: unknown;
  const text = readFileSync(path, 'utf8');
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw fail([`(file): not valid JSON at ${jsonErrorAt(text, err)}; fix the syntax`]);
  }
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) throw fail(parsed.error.issues.map((issue) => describeIssue(issue, json)));
  const { agents = {}, ...settings } = parsed.data;
  const dir = dirname(path);
  const problems: string[] = [];
  const top = toSection(settings, '', dir, env, problems);
  for (const [key, value] of Object.entries(processValues(settings, dir, env, problems))) {
    if (value === undefined) continue;
    top.values[key as keyof KeelConfig] = value;
    top.names[key] = key === 'temporalApiKey' ? 'temporalApiKeyEnv' : key;
  }
  const sections = new Map(
    Object.entries(agents).map(([id, section]) => [id, toSection(section, `agents.${id}.`, dir, env, problems)]),
  );
  if (problems.length > 0) throw fail(problems);
  return { path, defaults: { path, ...top }, agents: sections };
}

/** The process settings as KeelConfig values: file paths resolved, the Temporal API key read from its variable. */
function processValues(
  file: z.output<typeof fileSchema>,
  dir: string,
  env: NodeJS.ProcessEnv,
  problems: string[],
): Record<string, unknown> {
  const { temporalApiKeyEnv } = file;
  const temporalApiKey = temporalApiKeyEnv === undefined ? undefined : env[temporalApiKeyEnv] || undefined;
  if (temporalApiKeyEnv !== undefined && !temporalApiKey)
    problems.push(
      `temporalApiKeyEnv: ${temporalApiKeyEnv} is not set in the environment; export it, or remove temporalApiKeyEnv`,
    );
  const values: Record<string, unknown> = { temporalApiKey };
  for (const key of PROCESS_KEYS) {
    if (key === 'temporalApiKeyEnv') continue;
    const value = file[key];
    values[key] = FILE_PATH_KEYS.has(key) && typeof value === 'string' ? resolve(dir, value) : value;
  }
  return values;
}

/** Maps file settings to KeelConfig values; paths are resolved against the file's folder. */
function toSection(
  s: AgentSettings,
  prefix: string,
  dir: string,
  env: NodeJS.ProcessEnv,
  problems: string[],
): { values: ConfigSection['values']; names: Record<string, string> } {
  const values: ConfigSection['values'] = {};
  const names: Record<string, string> = {};
  const set = (key: keyof KeelConfig, value: unknown, fileKey: string) => {
    values[key] = value;
    names[key] = `${prefix}${fileKey}`;
  };
  // Settings whose file key is their own name are taken as they are; the rest are mapped below.
  const given: Partial<Record<string, unknown>> = s;
  for (const key of PLAIN_AGENT_KEYS) if (given[key] !== undefined) set(key, given[key], key);
  if (s.workStyle !== undefined) applyWorkStyle(s, set);
  if (s.workspace !== undefined) set('workspaceDir', resolve(dir, s.workspace), 'workspace');
  if (s.tools !== undefined) set('toolsModule', resolve(dir, s.tools), 'tools');
  if (s.toolTimeout !== undefined) set('toolTimeoutMs', s.toolTimeout, 'toolTimeout');
  if (s.toolTimeouts !== undefined) set('toolTimeouts', s.toolTimeouts, 'toolTimeouts');
  if (s.runBudget?.maxModelCalls !== undefined)
    set('maxModelCallsPerTurn', s.runBudget.maxModelCalls, 'runBudget.maxModelCalls');
  if (s.runBudget?.maxTokens !== undefined) set('maxTurnTokens', s.runBudget.maxTokens, 'runBudget.maxTokens');
  if (s.approvals?.tools !== undefined) set('approvalTools', s.approvals.tools, 'approvals.tools');
  if (s.approvals?.timeout !== undefined) set('approvalTimeoutMs', s.approvals.timeout, 'approvals.timeout');
  if (s.approvals?.approvers !== undefined) set('approvers', s.approvals.approvers, 'approvals.approvers');
  if (s.maxActiveTranscriptBytes !== undefined)
    set(
      'maxActiveTranscriptBytes',
      typeof s.maxActiveTranscriptBytes === 'string'
        ? parseByteSize(s.maxActiveTranscriptBytes)
        : s.maxActiveTranscriptBytes,
      'maxActiveTranscriptBytes',
    );
  if (s.reset) {
    if (s.reset.mode !== undefined) set('resetMode', s.reset.mode, 'reset.mode');
    if (s.reset.atHour !== undefined) set('resetHour', s.reset.atHour, 'reset.atHour');
    if (s.reset.timeZone !== undefined) set('resetTimeZone', s.reset.timeZone, 'reset.timeZone');
    if (s.reset.idleMinutes !== undefined) set('idleMinutes', s.reset.idleMinutes, 'reset.idleMinutes');
  }
  if (s.memoryFlush) {
    const f = s.memoryFlush;
    if (f.enabled !== undefined) set('memoryFlushEnabled', f.enabled, 'memoryFlush.enabled');
    if (f.prompt !== undefined) set('memoryFlushPrompt', f.prompt, 'memoryFlush.prompt');
    if (f.systemPrompt !== undefined) set('memoryFlushSystemPrompt', f.systemPrompt, 'memoryFlush.systemPrompt');
  }
  const key = (spec: { readonly apiKeyEnv?: string | undefined }, where: string): string | undefined => {
    if (!spec.apiKeyEnv) return undefined;
    const value = env[spec.apiKeyEnv];
    if (!value)
      problems.push(
        `${prefix}${where}.apiKeyEnv: ${spec.apiKeyEnv} is not set in the environment; export it, or remove apiKeyEnv for an endpoint without a key`,
      );
    return value || undefined;
  };
  if (s.model) {
    const m = s.model;
    set('model', m.id, 'model.id');
    if (m.provider) set('modelProvider', m.provider, 'model.provider');
    // A named provider takes the endpoint and key the spec gives; Anthropic falls back to ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY.
    if (m.provider === 'openai-compatible') {
      set('openAiBaseUrl', m.baseUrl, 'model.baseUrl');
      set('openAiApiKey', key(m, 'model'), 'model.apiKeyEnv');
      if (m.streamToolTurns !== undefined) set('openAiStreamToolTurns', m.streamToolTurns, 'model.streamToolTurns');
      if (m.maxConcurrentRequests !== undefined)
        set('openAiMaxConcurrentRequests', m.maxConcurrentRequests, 'model.maxConcurrentRequests');
    } else if (m.provider === 'anthropic') {
      if (m.baseUrl) set('anthropicBaseUrl', m.baseUrl, 'model.baseUrl');
      if (m.apiKeyEnv) set('anthropicApiKey', key(m, 'model'), 'model.apiKeyEnv');
    }
  }
  if (s.embeddings) {
    const e = s.embeddings;
    set('embeddingsBaseUrl', e.baseUrl, 'embeddings.baseUrl');
    set('embeddingsModel', e.model, 'embeddings.model');
    if (e.apiKeyEnv) set('embeddingsApiKey', key(e, 'embeddings'), 'embeddings.apiKeyEnv');
  }
  if (s.compactionModel) {
    const m = s.compactionModel;
    set('compactionModel', m.id, 'compactionModel.id');
    if (m.provider) {
      set('compactionModelProvider', m.provider, 'compactionModel.provider');
      set('compactionModelUrl', m.baseUrl, 'compactionModel.baseUrl');
      set('compactionModelApiKey', key(m, 'compactionModel'), 'compactionModel.apiKeyEnv');
    }
  }
  return { values, names };
}

/**
 * A work style (the presets of src/context/work-style-presets.ts) fills the four settings the section leaves unset: reserveTokens,
 * and contextEngineOptions' pruningTtl, keepLastAssistants and minPrunableToolChars. Those options
 * act in the budgeted engine, so a section with a work style and no engine selects it.
 */
function applyWorkStyle(s: AgentSettings, set: (key: keyof KeelConfig, value: unknown, fileKey: string) => void): void {
  const preset = WORK_STYLE_PRESETS[s.workStyle!];
  set('workStyle', s.workStyle, 'workStyle');
  if (s.reserveTokens === undefined) set('reserveTokens', preset.reserveTokens, 'workStyle');
  if (s.contextEngine === undefined) set('contextEngine', 'budgeted', 'workStyle');
  const fromPreset = {
    pruningTtl: preset.pruningTtl,
    keepLastAssistants: preset.keepLastAssistants,
    minPrunableToolChars: preset.minPrunableToolChars,
  };
  set(
    'contextEngineOptions',
    { ...fromPreset, ...s.contextEngineOptions },
    s.contextEngineOptions ? 'contextEngineOptions' : 'workStyle',
  );
}

/** `agents.support.model.provider: use "anthropic" or "openai-compatible"`; unknown keys list the known ones. */
function describeIssue(issue: z.core.$ZodIssue, json: unknown): string {
  const path = issue.path.map(String);
  const where = path.join('.') || '(top level)';
  if (issue.code === 'unrecognized_keys') {
    const kind =
      path.length === 0
        ? 'top'
        : path[0] === 'agents' && path.length === 2
          ? 'agent'
          : path.at(-1) === 'model' || path.at(-1) === 'compactionModel'
            ? 'model'
            : path.at(-1) === 'reset' || path.at(-1) === 'memoryFlush'
              ? path.at(-1)
              : undefined;
    const known = kind ? `; known settings here: ${SECTION_KEYS[kind]!.join(', ')}` : '';
    return issue.keys
      .map((k) => `${path.length ? `${where}.` : ''}${k}: unknown setting (check the spelling)${known}`)
      .join('\n  ');
  }
  if (path.length === 0) return `${where}: ${issue.message}`;
  return `${where}: ${issue.message} (got ${shownSettingValue(where, valueAtPath(json, issue.path))})`;
}
