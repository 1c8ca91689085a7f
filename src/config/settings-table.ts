/**
 * Every setting of `KeelConfig`, declared once: its environment variable, how the variable's text is
 * read, its key in keel.config.json, its validation and default (a zod schema), and a line for
 * people. keel-config.ts builds the config schema, the environment reader and the names in its
 * errors from this table; config-file.ts takes its plain keys from it; test/config checks
 * docs/reference.md against it.
 */
import { z } from 'zod';
import { DEFAULTS } from './defaults';
import { envSwitch, switchField } from './env-switch';
import { isKnownTimeZone } from '../sessions/lifecycle';
import { DEFAULT_CONTEXT_ENGINE_ID, registeredContextEngines } from '../engine/registry';
import { registeredCompactionProviders, unknownProviderMessage } from '../compaction/compaction-providers';
import { nativeEngineOptionShape } from '../engine/anthropic-native-options';
import { parseDuration, WORK_STYLES } from '../context/work-style-presets';
import {
  approvalTimeout,
  historyLimitsSchema,
  isWebOrigin,
  modelWindowsSchema,
  runLimit,
  thinkingLevelSchema,
  toolTimeout,
} from './setting-schemas';

/** One setting: where it is read from, what it may be, and what it means. */
export interface Setting<S extends z.ZodType = z.ZodType> {
  /** The environment variable that sets it (over the file); none: the file or code only. */
  readonly env?: string;
  /** How the variable's text becomes a value for `schema` (default: the text as it is). */
  readonly readEnv?: (text: string) => unknown;
  /** Its JSON path in keel.config.json (an agent section's too, unless the key is the process's); none: not in the file. */
  readonly file?: string;
  /** Validation and default: refusals name what to write instead. */
  readonly schema: S;
  /** What it does, in one line. */
  readonly doc: string;
}

/** Declares one row of the table, keeping its schema's own type. */
function setting<S extends z.ZodType>(row: Setting<S>): Setting<S> {
  return row;
}

/** A comma-separated list, blanks dropped. */
function commaList(text: string): string[] {
  return text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

/** JSON text, or the text itself for zod to reject with the variable's name. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** "20mb", "512kb", "1gb" or a plain number of bytes; anything else is returned as is for zod to reject. */
export function parseByteSize(text: string): number | string {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?\s*$/i.exec(text);
  if (!m) return text;
  const unit = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 }[(m[2] ?? 'b').toLowerCase() as 'b'];
  return Math.round(Number(m[1]) * unit);
}

/** The settings, in the order the parsed config lists them. */
export const SETTINGS = {
  databaseUrl: setting({
    env: 'DATABASE_URL',
    schema: z.url('DATABASE_URL must be a postgres:// URL').optional(),
    doc: 'PostgreSQL URL; unset → embedded PGlite under `home`.',
  }),
  temporalAddress: setting({
    env: 'TEMPORAL_ADDRESS',
    file: 'temporalAddress',
    schema: z.string().min(1).optional(),
    doc: 'Existing Temporal frontend (host:port); unset → Keel starts a local dev server.',
  }),
  temporalNamespace: setting({
    env: 'TEMPORAL_NAMESPACE',
    file: 'temporalNamespace',
    schema: z.string().min(1).default('default'),
    doc: 'The Temporal namespace workers and clients use.',
  }),
  temporalTls: setting({
    env: 'TEMPORAL_TLS',
    readEnv: envSwitch,
    file: 'temporalTls',
    schema: switchField().optional(),
    doc: 'TLS to the Temporal frontend; on when a CA, client certificate or API key is set (TEMPORAL_TLS=off turns it off).',
  }),
  temporalTlsCaPath: setting({
    env: 'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
    file: 'temporalTlsCaPath',
    schema: z.string().min(1).optional(),
    doc: "PEM file of the CA that signed the frontend's certificate; unset: the system's roots.",
  }),
  temporalTlsCertPath: setting({
    env: 'TEMPORAL_TLS_CLIENT_CERT_PATH',
    file: 'temporalTlsCertPath',
    schema: z.string().min(1).optional(),
    doc: 'PEM files of the client certificate and its key (mTLS): both or neither.',
  }),
  temporalTlsKeyPath: setting({
    env: 'TEMPORAL_TLS_CLIENT_KEY_PATH',
    file: 'temporalTlsKeyPath',
    schema: z.string().min(1).optional(),
    doc: "PEM file of the client certificate's key (mTLS): with temporalTlsCertPath.",
  }),
  temporalTlsServerName: setting({
    env: 'TEMPORAL_TLS_SERVER_NAME',
    file: 'temporalTlsServerName',
    schema: z.string().min(1).optional(),
    doc: "The name the frontend's certificate is checked against, when it differs from the address's host.",
  }),
  temporalApiKey: setting({
    env: 'TEMPORAL_API_KEY',
    file: 'temporalApiKeyEnv',
    schema: z.string().min(1).optional(),
    doc: 'A Temporal Cloud API key, sent as a bearer token (TLS is then on).',
  }),
  taskQueue: setting({
    env: 'KEEL_TASK_QUEUE',
    file: 'taskQueue',
    schema: z.string().min(1).default('keel'),
    doc: 'Task queue of workers and clients.',
  }),
  home: setting({
    env: 'KEEL_HOME',
    file: 'home',
    schema: z.string().min(1).default('.keel'),
    doc: 'Embedded state folder (PGlite data, dev-server history).',
  }),
  maintenanceMode: setting({
    env: 'KEEL_MAINTENANCE_MODE',
    file: 'maintenanceMode',
    schema: z.enum(['warn', 'enforce'], { message: 'use warn or enforce' }).default('warn'),
    doc: 'What session maintenance (the Schedule and `keel maintenance`) does: warn only reports, enforce deletes.',
  }),
  anthropicApiKey: setting({
    env: 'ANTHROPIC_API_KEY',
    file: 'model.apiKeyEnv',
    schema: z.string().min(1).optional(),
    doc: 'Key of the Anthropic Messages API.',
  }),
  anthropicBaseUrl: setting({
    env: 'ANTHROPIC_BASE_URL',
    file: 'model.baseUrl',
    schema: z.url('ANTHROPIC_BASE_URL must be an http(s) URL').optional(),
    doc: "Endpoint of the Anthropic Messages API; unset: the SDK's.",
  }),
  model: setting({
    env: 'KEEL_MODEL',
    file: 'model.id',
    schema: z.string().min(1).default(DEFAULTS.model),
    doc: 'The chat model id.',
  }),
  modelProvider: setting({
    file: 'model.provider',
    schema: z
      .enum(['anthropic', 'openai-compatible'], { message: 'use anthropic or openai-compatible' })
      .default('anthropic'),
    doc: 'Which API the chat model speaks: Anthropic Messages, or an OpenAI-compatible chat-completions endpoint.',
  }),
  openAiBaseUrl: setting({
    file: 'model.baseUrl',
    schema: z.url('must be an http(s) URL').optional(),
    doc: "The chat model's endpoint when `modelProvider` is openai-compatible (config file `model.baseUrl`).",
  }),
  openAiApiKey: setting({
    file: 'model.apiKeyEnv',
    schema: z.string().min(1).optional(),
    doc: 'Bearer key of that endpoint (config file `model.apiKeyEnv` names the variable holding it).',
  }),
  openAiStreamToolTurns: setting({
    file: 'model.streamToolTurns',
    schema: z.boolean().optional(),
    doc: "Stream the chat model's tool turns (config file `model.streamToolTurns`); unset: stream, and learn when the server refuses.",
  }),
  openAiMaxConcurrentRequests: setting({
    file: 'model.maxConcurrentRequests',
    schema: z.number().int().positive().optional(),
    doc: "The chat endpoint's requests in flight per process (config file `model.maxConcurrentRequests`); unset: 1 on loopback, else no limit.",
  }),
  models: setting({
    file: 'models',
    schema: modelWindowsSchema.optional(),
    doc: 'Per-provider model windows (OpenClaw `models.providers.<provider>.models[].contextWindow`): first in window resolution.',
  }),
  contextTokens: setting({
    file: 'contextTokens',
    schema: z.coerce.number().int().positive().optional(),
    doc: "The agent's `contextTokens` cap: lowers the resolved window, never raises it.",
  }),
  maxOutputTokens: setting({
    env: 'KEEL_MAX_OUTPUT_TOKENS',
    file: 'maxOutputTokens',
    schema: z.coerce.number().int().positive().optional(),
    doc: "The model call's max_tokens, held to the reserve of the window in force; unset: 4,096, at most half the reserve (`maxOutputTokensFor`).",
  }),
  thinkingLevel: setting({
    env: 'KEEL_THINKING_LEVEL',
    file: 'thinkingLevel',
    schema: thinkingLevelSchema.default('off'),
    doc: "How hard the agent's turns think (off, minimal, low, medium, high, xhigh): Anthropic's thinking budget, an OpenAI-compatible server's reasoning_effort; a session's own level (`/think`) wins.",
  }),
  contextWindowTokens: setting({
    env: 'KEEL_CONTEXT_WINDOW',
    file: 'contextWindowTokens',
    schema: z.coerce.number().int().positive().default(DEFAULTS.contextWindowTokens),
    doc: "The window when no per-provider model entry decides (OpenClaw's 200,000 default, settable).",
  }),
  reserveTokens: setting({
    env: 'KEEL_RESERVE_TOKENS',
    file: 'reserveTokens',
    schema: z.coerce.number().int().nonnegative().default(DEFAULTS.reserveTokens),
    doc: 'Tokens kept free for the reply; raised to `reserveTokensFloor`, and never more than half the window (`effectiveReserveTokens`).',
  }),
  reserveTokensFloor: setting({
    env: 'KEEL_RESERVE_TOKENS_FLOOR',
    file: 'reserveTokensFloor',
    schema: z.coerce.number().int().nonnegative().default(DEFAULTS.reserveTokensFloor),
    doc: "The reserve's floor (KEEL_RESERVE_TOKENS_FLOOR); 0 turns it off, so reserveTokens applies as set.",
  }),
  contextEngine: setting({
    env: 'KEEL_CONTEXT_ENGINE',
    file: 'contextEngine',
    schema: z
      .string()
      .min(1)
      .superRefine((id, ctx) => {
        const known = registeredContextEngines();
        if (!known.includes(id)) {
          ctx.addIssue({
            code: 'custom',
            message: `"${id}" is not a registered context engine; use one of ${known.join(', ')} (an application registers its own with registerContextEngine before starting the worker)`,
          });
        }
      })
      .default(DEFAULT_CONTEXT_ENGINE_ID),
    doc: "Which context engine assembles the model's view: an id registered when the config is parsed.",
  }),
  compactionProvider: setting({
    env: 'KEEL_COMPACTION_PROVIDER',
    file: 'compactionProvider',
    schema: z
      .string()
      .min(1)
      .superRefine((id, ctx) => {
        if (!registeredCompactionProviders().includes(id))
          ctx.addIssue({ code: 'custom', message: unknownProviderMessage(id) });
      })
      .optional(),
    doc: "The compaction provider that writes summaries: an id registered when the config is parsed; Keel's summarizer answers when it fails or returns nothing.",
  }),
  contextEngineOptions: setting({
    file: 'contextEngineOptions',
    schema: z
      .looseObject({
        minPrunableToolChars: z.number().int().nonnegative().optional(),
        keepLastAssistants: z.number().int().nonnegative().optional(),
        /** Milliseconds; the config file may write "2m", "90s", "1h". */
        pruningTtl: z
          .preprocess(
            parseDuration,
            z
              .number({ message: 'use a duration such as "2m", "90s" or "1h" (or milliseconds)' })
              .int()
              .positive('use a duration > 0'),
          )
          .optional(),
        ...nativeEngineOptionShape,
      })
      .optional(),
    doc: "Options handed to the context engine's factory (budgeted: minPrunableToolChars, keepLastAssistants, pruningTtl; anthropic-native: see its options).",
  }),
  workStyle: setting({
    file: 'workStyle',
    schema: z.enum(WORK_STYLES, { message: `use one of ${WORK_STYLES.join(', ')}` }).optional(),
    doc: 'The work-style preset the file chose (src/context/work-style-presets.ts); its values are already in reserveTokens and contextEngineOptions.',
  }),
  embeddingsBaseUrl: setting({
    env: 'KEEL_EMBEDDINGS_BASE_URL',
    file: 'embeddings.baseUrl',
    schema: z.url('KEEL_EMBEDDINGS_BASE_URL must be an http(s) URL such as http://127.0.0.1:11434/v1').optional(),
    doc: 'OpenAI-compatible `/v1/embeddings` root for hybrid recall (KEEL_EMBEDDINGS_BASE_URL; config file `embeddings.baseUrl`); unset: keywords only.',
  }),
  embeddingsModel: setting({
    env: 'KEEL_EMBEDDINGS_MODEL',
    file: 'embeddings.model',
    schema: z.string().min(1).optional(),
    doc: 'The embedding model (KEEL_EMBEDDINGS_MODEL; `embeddings.model`); vectors are kept per model, so a new name re-embeds.',
  }),
  embeddingsApiKey: setting({
    env: 'KEEL_EMBEDDINGS_API_KEY',
    file: 'embeddings.apiKeyEnv',
    schema: z.string().min(1).optional(),
    doc: 'Bearer key of the embeddings endpoint (KEEL_EMBEDDINGS_API_KEY; `embeddings.apiKeyEnv` names the variable).',
  }),
  compactionModelUrl: setting({
    env: 'KEEL_COMPACTION_MODEL_URL',
    file: 'compactionModel.baseUrl',
    schema: z.url().optional(),
    doc: 'Optional separate compaction model: by default an OpenAI-compatible endpoint (e.g. local Ollama).',
  }),
  compactionModel: setting({
    env: 'KEEL_COMPACTION_MODEL',
    file: 'compactionModel.id',
    schema: z.string().min(1).optional(),
    doc: 'The summarizer model id; unset: the chat model.',
  }),
  compactionModelProvider: setting({
    file: 'compactionModel.provider',
    schema: z
      .enum(['anthropic', 'openai-compatible'], { message: 'use anthropic or openai-compatible' })
      .default('openai-compatible'),
    doc: "The compaction model's API; anthropic uses compactionModelUrl, else the chat model's Anthropic endpoint.",
  }),
  compactionModelApiKey: setting({
    file: 'compactionModel.apiKeyEnv',
    schema: z.string().min(1).optional(),
    doc: 'Bearer key of the summarizer endpoint (config file `compactionModel.apiKeyEnv` names the variable).',
  }),
  toolsModule: setting({
    env: 'KEEL_TOOLS_MODULE',
    file: 'tools',
    schema: z.string().min(1).optional(),
    doc: 'Path of a module exporting `registerTools(registry)`.',
  }),
  toolTimeoutMs: setting({
    env: 'KEEL_TOOL_TIMEOUT_MS',
    file: 'toolTimeout',
    schema: toolTimeout.default(DEFAULTS.toolTimeoutMs),
    doc: 'How long one run of a tool may take when the tool names no timeout of its own (KEEL_TOOL_TIMEOUT_MS; config file `toolTimeout`, e.g. "2m"). Past it the model gets a timeout error result.',
  }),
  toolTimeouts: setting({
    file: 'toolTimeouts',
    schema: z.record(z.string(), toolTimeout).optional(),
    doc: 'Timeouts of named tools, above the tool\'s own (config file `toolTimeouts`: { "<tool>": "10m" }).',
  }),
  approvalTools: setting({
    env: 'KEEL_APPROVAL_TOOLS',
    readEnv: commaList,
    file: 'approvals.tools',
    schema: z.array(z.string().min(1, 'use tool names or patterns such as "send_*"')).default([]),
    doc: "Tools whose calls wait for a person's approval: names, or patterns with `*` (KEEL_APPROVAL_TOOLS, comma-separated; config file `approvals.tools`). A tool's own `approval` asks too.",
  }),
  approvalTimeoutMs: setting({
    env: 'KEEL_APPROVAL_TIMEOUT',
    file: 'approvals.timeout',
    schema: approvalTimeout.default(DEFAULTS.approvalTimeoutMs),
    doc: 'A call waiting for approval is denied as "timed out" after this long (KEEL_APPROVAL_TIMEOUT; `approvals.timeout`).',
  }),
  approvers: setting({
    file: 'approvals.approvers',
    schema: z.array(z.string().min(1)).optional(),
    doc: "Who may approve this agent's calls, as people read it (`approvals.approvers`); shown with each pending call.",
  }),
  maxModelCallsPerTurn: setting({
    env: 'KEEL_MAX_MODEL_CALLS',
    file: 'runBudget.maxModelCalls',
    schema: runLimit('model calls', 2).default(DEFAULTS.runBudget.maxModelCalls),
    doc: "A turn's run budget (`runBudget` in the file; KEEL_MAX_MODEL_CALLS, KEEL_MAX_TURN_TOKENS): it stops at the first limit reached, with one last call without tools that reports where it stands. `none` (or null) is no limit; the step limit may be off only where a token limit is set.",
  }),
  maxTurnTokens: setting({
    env: 'KEEL_MAX_TURN_TOKENS',
    file: 'runBudget.maxTokens',
    schema: runLimit('tokens', 1).default(DEFAULTS.runBudget.maxTokens),
    doc: "A turn's token budget: every token its model calls were billed; `none` (or null) is no limit.",
  }),
  modelIdleTimeoutMs: setting({
    env: 'KEEL_MODEL_IDLE_TIMEOUT_MS',
    file: 'modelIdleTimeoutMs',
    schema: z.coerce.number().int().positive().default(DEFAULTS.modelStreamIdleTimeoutMs),
    doc: 'A model stream silent this long fails as a retryable timeout (both model clients).',
  }),
  compactionMinReclaimShare: setting({
    env: 'KEEL_COMPACTION_MIN_RECLAIM',
    schema: z.coerce
      .number()
      .min(0, 'a share from 0 to 0.9')
      .max(0.9, 'a share from 0 to 0.9 (0 turns the hold off)')
      .default(DEFAULTS.compactionMinReclaimShare),
    doc: 'A compaction freeing less than this share of its input holds the next threshold compaction (KEEL_COMPACTION_MIN_RECLAIM).',
  }),
  summaryMaxWindowShare: setting({
    env: 'KEEL_SUMMARY_MAX_WINDOW_SHARE',
    schema: z.coerce
      .number()
      .min(0.005, 'a share from 0.005 to 0.25')
      .max(0.25, 'a share from 0.005 to 0.25 (a summary must leave room for the conversation)')
      .default(DEFAULTS.maxSummaryWindowShare),
    doc: 'A compaction summary takes at most this share of the window, however much it replaces (KEEL_SUMMARY_MAX_WINDOW_SHARE).',
  }),
  summarizerSessionCalls: setting({
    env: 'KEEL_SUMMARIZER_SESSION_CALLS',
    schema: z.coerce.number().int().nonnegative('a whole number of calls ≥ 0').optional(),
    doc: 'Summarizer spend limit: model calls and tokens (input + output) per window, per session key and per agent (KEEL_SUMMARIZER_SESSION_CALLS, …_SESSION_TOKENS, …_AGENT_CALLS, …_AGENT_TOKENS, window KEEL_SUMMARIZER_SPEND_WINDOW_MINUTES). Unset: no limit. Past it a compaction writes the extractive summary.',
  }),
  summarizerSessionTokens: setting({
    env: 'KEEL_SUMMARIZER_SESSION_TOKENS',
    schema: z.coerce.number().int().nonnegative('a whole number of tokens ≥ 0').optional(),
    doc: 'Summarizer tokens (input + output) per window per session key; unset: no limit.',
  }),
  summarizerAgentCalls: setting({
    env: 'KEEL_SUMMARIZER_AGENT_CALLS',
    schema: z.coerce.number().int().nonnegative('a whole number of calls ≥ 0').optional(),
    doc: 'Summarizer model calls per window per agent, summed over its sessions; unset: no limit.',
  }),
  summarizerAgentTokens: setting({
    env: 'KEEL_SUMMARIZER_AGENT_TOKENS',
    schema: z.coerce.number().int().nonnegative('a whole number of tokens ≥ 0').optional(),
    doc: 'Summarizer tokens per window per agent, summed over its sessions; unset: no limit.',
  }),
  summarizerSpendWindowMinutes: setting({
    env: 'KEEL_SUMMARIZER_SPEND_WINDOW_MINUTES',
    schema: z.coerce.number().int().positive('a whole number of minutes > 0').default(60),
    doc: "The summarizer spend limit's sliding window.",
  }),
  softThresholdTokens: setting({
    env: 'KEEL_SOFT_THRESHOLD_TOKENS',
    file: 'softThresholdTokens',
    schema: z.coerce.number().int().nonnegative().default(DEFAULTS.softThresholdTokens),
    doc: 'Memory flush starts this many tokens below the compaction threshold (OpenClaw softThresholdTokens).',
  }),
  keepRecentTokens: setting({
    env: 'KEEL_KEEP_RECENT_TOKENS',
    file: 'keepRecentTokens',
    schema: z.coerce.number().int().nonnegative('a whole number of tokens ≥ 0').optional(),
    doc: 'The recent tail a compaction keeps verbatim when its request names none (OpenClaw keepRecentTokens): manual `/compact` too, which is otherwise a hard checkpoint; unset: 20,000 for automatic compactions. At most a quarter of the window.',
  }),
  memoryFlushEnabled: setting({
    env: 'KEEL_MEMORY_FLUSH',
    readEnv: envSwitch,
    file: 'memoryFlush.enabled',
    schema: switchField().default(true),
    doc: 'The silent memory flush before compactions (OpenClaw memoryFlush.enabled); off: compactions run without it.',
  }),
  memoryFlushPrompt: setting({
    env: 'KEEL_MEMORY_FLUSH_PROMPT',
    file: 'memoryFlush.prompt',
    schema: z.string().trim().min(1, 'write the instruction, or leave it unset for the built-in one').optional(),
    doc: "The flush turn's instruction (OpenClaw memoryFlush.prompt); unset: Keel's, which asks for memory_write notes, a memory_checkpoint and NO_REPLY.",
  }),
  memoryFlushSystemPrompt: setting({
    env: 'KEEL_MEMORY_FLUSH_SYSTEM_PROMPT',
    file: 'memoryFlush.systemPrompt',
    schema: z.string().trim().min(1, 'write the text, or leave it unset').optional(),
    doc: "Added to the end of the flush turn's system prompt (OpenClaw memoryFlush.systemPrompt), after the turns' own, so their prompt cache still serves it.",
  }),
  backgroundCompactionShare: setting({
    env: 'KEEL_BACKGROUND_COMPACTION_SHARE',
    file: 'backgroundCompactionShare',
    schema: z.coerce
      .number()
      .min(0, 'a share from 0 to 0.95')
      .max(0.95, 'a share from 0 to 0.95 (0 turns background compaction off)')
      .default(DEFAULTS.backgroundCompactionShare),
    doc: 'A compaction starts beside the session (turns go on meanwhile) past this share of window − reserve; 0: off.',
  }),
  memoryFlushModel: setting({
    env: 'KEEL_MEMORY_FLUSH_MODEL',
    file: 'memoryFlushModel',
    schema: z.string().min(1).optional(),
    doc: "Model id for the silent memory-flush turn; default: the session's chat model (its override included).",
  }),
  maxActiveTranscriptBytes: setting({
    env: 'KEEL_MAX_ACTIVE_TRANSCRIPT_BYTES',
    readEnv: parseByteSize,
    file: 'maxActiveTranscriptBytes',
    schema: z.coerce.number().int().nonnegative().default(0),
    doc: 'Preflight compaction when the active transcript exceeds this many bytes; 0 disables.',
  }),
  resetMode: setting({
    env: 'KEEL_RESET_MODE',
    file: 'reset.mode',
    schema: z.enum(['daily', 'idle', 'none'], { message: 'use daily, idle or none' }).default('daily'),
    doc: 'Session reset (OpenClaw): daily at resetHour in resetTimeZone, or after idleMinutes; whichever first.',
  }),
  resetHour: setting({
    env: 'KEEL_RESET_HOUR',
    file: 'reset.atHour',
    schema: z.coerce.number().int().min(0).max(23).default(DEFAULTS.dailyResetHour),
    doc: 'The hour (0-23) a daily reset happens at, in resetTimeZone.',
  }),
  resetTimeZone: setting({
    env: 'KEEL_RESET_TIMEZONE',
    file: 'reset.timeZone',
    schema: z
      .string()
      .refine(isKnownTimeZone, 'not a known IANA time zone; use a name such as "Europe/Berlin" or "UTC"')
      .default('UTC'),
    doc: 'The time zone of the daily reset hour.',
  }),
  idleMinutes: setting({
    env: 'KEEL_IDLE_MINUTES',
    file: 'reset.idleMinutes',
    schema: z.coerce.number().int().positive().optional(),
    doc: 'A session idle this long is reset; unset: no idle reset.',
  }),
  historyLimits: setting({
    env: 'KEEL_HISTORY_LIMITS',
    readEnv: parseJson,
    file: 'historyLimits',
    schema: historyLimitsSchema.optional(),
    doc: 'Per-channel history limits (OpenClaw `channels.<provider>.historyLimit`, `dmHistoryLimit`, `dms.<userId>.historyLimit`), as JSON in KEEL_HISTORY_LIMITS.',
  }),
  contextCacheBytes: setting({
    env: 'KEEL_CONTEXT_CACHE_BYTES',
    readEnv: parseByteSize,
    schema: z.coerce.number().int().nonnegative().default(DEFAULTS.contextCacheBytes),
    doc: "Memory the worker may spend on its copies of sessions' active windows (KEEL_CONTEXT_CACHE_BYTES): a turn then reads only the entries appended since; least recently used sessions go first; 0 disables.",
  }),
  maxCachedWorkflows: setting({
    env: 'KEEL_MAX_CACHED_WORKFLOWS',
    schema: z.coerce.number().int().nonnegative().default(DEFAULTS.maxCachedWorkflows),
    doc: "Session workflows the worker keeps in memory between their turns (KEEL_MAX_CACHED_WORKFLOWS); a turn of one that was evicted replays its history first. About 1 MB each is the SDK's guidance.",
  }),
  databasePoolSize: setting({
    env: 'KEEL_DATABASE_POOL_SIZE',
    schema: z.coerce.number().int().min(1, 'databasePoolSize must be at least 1').default(DEFAULTS.databasePoolSize),
    doc: "PostgreSQL connections one process may hold (KEEL_DATABASE_POOL_SIZE). Each turn's activities hold one at a time; a worker running many sessions at once queues for them beyond this.",
  }),
  databasePreparedStatements: setting({
    env: 'KEEL_DATABASE_PREPARED_STATEMENTS',
    readEnv: envSwitch,
    schema: switchField().default(true),
    doc: 'The statements every turn runs are prepared once per connection (KEEL_DATABASE_PREPARED_STATEMENTS, default on). Off for a pooler that cannot keep them, such as PgBouncer before 1.21 in transaction mode.',
  }),
  shutdownGraceMs: setting({
    env: 'KEEL_SHUTDOWN_GRACE_MS',
    file: 'shutdownGraceMs',
    schema: z.coerce.number().int().nonnegative().default(DEFAULTS.workerShutdownGraceMs),
    doc: 'A stopping worker lets in-flight activities finish this long (KEEL_SHUTDOWN_GRACE_MS).',
  }),
  workspaceDir: setting({
    env: 'KEEL_WORKSPACE',
    file: 'workspace',
    schema: z.string().min(1).optional(),
    doc: 'Workspace folder: bootstrap files (AGENTS.md, …) and memory notes (`memory/YYYY-MM-DD.md`); unset → notes only in the database.',
  }),
  workspaceAccess: setting({
    env: 'KEEL_WORKSPACE_ACCESS',
    file: 'workspaceAccess',
    schema: z.enum(['rw', 'ro', 'none'], { message: 'use rw, ro or none' }).default('rw'),
    doc: 'What the agent may do with its workspace: rw, ro (read bootstrap files, no flush) or none.',
  }),
  workspacePollSeconds: setting({
    env: 'KEEL_WORKSPACE_POLL_SECONDS',
    file: 'workspacePollSeconds',
    schema: z.coerce.number().nonnegative().default(DEFAULTS.workspacePollSeconds),
    doc: 'Workspace files are re-hashed this often as a fallback to the file watcher (seconds); 0 disables polling.',
  }),
  workspaceWatch: setting({
    env: 'KEEL_WORKSPACE_WATCH',
    readEnv: envSwitch,
    schema: switchField().default(true),
    doc: 'Watch the workspace folder for changes (off: only the poll notices them, e.g. where watchers are unreliable).',
  }),
  identity: setting({
    env: 'KEEL_IDENTITY',
    file: 'identity',
    schema: z.string().min(1).optional(),
    doc: "The agent's identity line, first in the system prompt.",
  }),
  promptMode: setting({
    env: 'KEEL_PROMPT_MODE',
    file: 'promptMode',
    schema: z.enum(['full', 'minimal', 'none'], { message: 'use full, minimal or none' }).default('full'),
    doc: 'System prompt mode for main sessions (subagent, cron and hook sessions use minimal).',
  }),
  userTimeZone: setting({
    env: 'KEEL_TIMEZONE',
    file: 'userTimeZone',
    schema: z
      .string()
      .refine(isKnownTimeZone, 'not a known IANA time zone; use a name such as "Europe/Berlin" or "UTC"')
      .default('UTC'),
    doc: 'Time zone the runtime section of the system prompt states the date in.',
  }),
  promptCaching: setting({
    env: 'KEEL_PROMPT_CACHING',
    readEnv: envSwitch,
    file: 'promptCaching',
    schema: switchField().default(true),
    doc: 'Provider prompt caching (cache_control breakpoints on system, tools and the stable prefix).',
  }),
  smallWindowTokens: setting({
    env: 'KEEL_SMALL_WINDOW_TOKENS',
    file: 'smallWindowTokens',
    schema: z.coerce.number().int().nonnegative('use tokens ≥ 0 (0 turns it off)').default(DEFAULTS.smallWindowTokens),
    doc: 'At or below this configured window (KEEL_SMALL_WINDOW_TOKENS), main sessions get the minimal system prompt instead of the full one and the agent no subagent tools; 0 turns it off.',
  }),
  compactionPromptCache: setting({
    env: 'KEEL_COMPACTION_PROMPT_CACHE',
    readEnv: envSwitch,
    file: 'compactionPromptCache',
    schema: switchField().default(DEFAULTS.compactionPromptCache),
    doc: 'Threshold and manual compactions ask for the summary on the last turn\'s cached request (see README, "Compaction").',
  }),
  subagentMaxDepth: setting({
    env: 'KEEL_SUBAGENT_MAX_DEPTH',
    file: 'subagentMaxDepth',
    schema: z.coerce.number().int().nonnegative('0 turns spawning off').default(DEFAULTS.subagentMaxDepth),
    doc: "How deep subagents may nest: 1 lets the main agent spawn and its children not (OpenClaw's maxSpawnDepth).",
  }),
  subagentMaxChildren: setting({
    env: 'KEEL_SUBAGENT_MAX_CHILDREN',
    file: 'subagentMaxChildren',
    schema: z.coerce.number().int().positive().default(DEFAULTS.subagentMaxChildren),
    doc: 'Subagents one session may have running at once; a spawn past it is refused with a tool error.',
  }),
  subagentAllowAgents: setting({
    env: 'KEEL_SUBAGENT_ALLOW_AGENTS',
    readEnv: commaList,
    file: 'subagentAllowAgents',
    schema: z.array(z.string().min(1, 'use agent ids, or "*" for any')).optional(),
    doc: "The agents this agent may spawn with `sessions_spawn`'s `agentId`, besides its own (KEEL_SUBAGENT_ALLOW_AGENTS, comma-separated; `*`: any); unset → its own only, as OpenClaw's `subagents.allowAgents`.",
  }),
  encryptionKeys: setting({
    env: 'KEEL_ENCRYPTION_KEYS',
    schema: z.string().min(1).optional(),
    doc: 'AES-256-GCM keys, `id:base64key[,…]` (KEEL_ENCRYPTION_KEYS): set → Temporal payloads are encrypted.',
  }),
  encryptionKeyId: setting({
    env: 'KEEL_ENCRYPTION_KEY_ID',
    schema: z.string().min(1).optional(),
    doc: 'Which of those keys new data is sealed with (rotation); default: the first listed.',
  }),
  encryptAtRest: setting({
    env: 'KEEL_ENCRYPT_AT_REST',
    readEnv: envSwitch,
    schema: switchField().default(false),
    doc: 'Also encrypt entry payloads, summaries and memory notes in PostgreSQL (needs encryptionKeys).',
  }),
  codecServerPort: setting({
    env: 'KEEL_CODEC_SERVER_PORT',
    schema: z.coerce.number().int().min(0).max(65535).optional(),
    doc: 'Port of the codec server the Temporal Web UI decodes payloads through; unset → off.',
  }),
  codecServerToken: setting({
    env: 'KEEL_CODEC_SERVER_TOKEN',
    schema: z.string().min(16, 'use at least 16 characters (`openssl rand -hex 24`)').optional(),
    doc: 'Bearer token the codec server requires (KEEL_CODEC_SERVER_TOKEN); required when the port is set.',
  }),
  codecServerOrigins: setting({
    env: 'KEEL_CODEC_SERVER_ORIGINS',
    readEnv: commaList,
    schema: z
      .array(
        z.string().refine(isWebOrigin, 'each origin is scheme://host[:port], such as https://temporal-ui.example.com'),
      )
      .min(1)
      .default(['http://localhost:8233', 'http://127.0.0.1:8233']),
    doc: 'Web UI origins the codec server answers cross-origin (KEEL_CODEC_SERVER_ORIGINS, comma-separated); default: the local dev UI.',
  }),
  allowedAgents: setting({
    env: 'KEEL_ALLOWED_AGENTS',
    readEnv: commaList,
    schema: z.array(z.string().min(1)).min(1).optional(),
    doc: 'Agents this worker and its clients serve (KEEL_ALLOWED_AGENTS, comma-separated); unset → all.',
  }),
  apiPort: setting({
    env: 'KEEL_API_PORT',
    file: 'apiPort',
    schema: z.coerce.number().int().min(0).max(65535).default(DEFAULTS.apiPort),
    doc: 'Port of the HTTP API, `keel serve` and `keel dev` (KEEL_API_PORT).',
  }),
  apiHost: setting({
    env: 'KEEL_API_HOST',
    file: 'apiHost',
    schema: z.string().min(1).default(DEFAULTS.apiHost),
    doc: 'Address the HTTP API binds (KEEL_API_HOST); beyond loopback it needs KEEL_API_TOKEN.',
  }),
  apiToken: setting({
    env: 'KEEL_API_TOKEN',
    schema: z.string().min(16, 'use at least 16 characters (`openssl rand -hex 24`)').optional(),
    doc: 'Bearer token every HTTP API request must carry (KEEL_API_TOKEN); environment only: it is a secret.',
  }),
};

/** The settings' names. */
export type SettingKey = keyof typeof SETTINGS;

/** The table's schemas as a zod object shape, each key keeping its own type. */
export function settingsShape(): { [K in SettingKey]: (typeof SETTINGS)[K]['schema'] } {
  return Object.fromEntries(Object.entries(SETTINGS).map(([key, row]) => [key, row.schema])) as {
    [K in SettingKey]: (typeof SETTINGS)[K]['schema'];
  };
}

/** The settings the environment sets, each as its variable's text read (unset or empty: absent). */
export function settingsFromEnv(env: NodeJS.ProcessEnv): Partial<Record<SettingKey, unknown>> {
  const values: Partial<Record<SettingKey, unknown>> = {};
  for (const [key, row] of Object.entries(SETTINGS) as [SettingKey, Setting][]) {
    const text = row.env === undefined ? undefined : env[row.env];
    if (!text) continue;
    const value = row.readEnv ? row.readEnv(text) : text;
    if (value !== undefined) values[key] = value;
  }
  return values;
}

/** The variable that sets `key`, or the key itself when only the file or code sets it. */
export function envNameOf(key: string): string {
  return (SETTINGS as Record<string, Setting>)[key]?.env ?? key;
}
