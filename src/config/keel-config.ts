import { z } from 'zod';
import { DEFAULTS } from './defaults';
import { envSwitch, switchField } from './env-switch';
import { isKnownTimeZone } from '../sessions/lifecycle';
import { DEFAULT_CONTEXT_ENGINE_ID, registeredContextEngines } from '../engine/registry';
import { nativeEngineOptionShape } from '../engine/anthropic-native-options';
import { maxOutputTokensFor } from '../context/context-window';
import { parseKeyRing, type KeyRing } from '../security/key-ring';
import { parseDuration, WORK_STYLES } from '../context/work-style-presets';
import { shownSettingValue, valueAtPath } from './shown-setting-value';

const modelWindowsSchema = z.object({
  providers: z.record(
    z.string(),
    z.object({
      models: z
        .array(z.object({ id: z.string().min(1), contextWindow: z.number().int().positive().optional() }))
        .optional(),
    }),
  ),
});

const limit = z.number().int().positive('history limits are whole numbers of user turns > 0');
const historyLimitsSchema = z.object({
  channels: z.record(
    z.string(),
    z.object({
      historyLimit: limit.optional(),
      dmHistoryLimit: limit.optional(),
      dms: z.record(z.string(), z.object({ historyLimit: limit.optional() })).optional(),
    }),
  ),
});

/** A tool timeout: milliseconds, or a duration such as "30s" (the environment gives digits as text). */
const toolTimeout = z.preprocess(
  (v) => (typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : parseDuration(v)),
  z
    .number({ message: 'use a duration such as "30s" or "5m" (or milliseconds)' })
    .int()
    .positive('use a duration > 0')
    .max(DEFAULTS.toolTimeoutMaxMs, 'use at most "24h"'),
);

/** An approval timeout: milliseconds, or a duration such as "10m" or "24h". */
const approvalTimeout = z.preprocess(
  (v) => (typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : parseDuration(v)),
  z
    .number({ message: 'use a duration such as "30m" or "24h" (or milliseconds)' })
    .int()
    .positive('use a duration > 0')
    .max(DEFAULTS.approvalTimeoutMaxMs, 'use at most "168h" (a week)'),
);

/** Keel's runtime configuration, parsed from the environment (and overridable in code). */
export const keelConfigSchema = z
  .object({
    /** PostgreSQL URL; unset → embedded PGlite under `home`. */
    databaseUrl: z.url('DATABASE_URL must be a postgres:// URL').optional(),
    /** Existing Temporal frontend (host:port); unset → Keel starts a local dev server. */
    temporalAddress: z.string().min(1).optional(),
    temporalNamespace: z.string().min(1).default('default'),
    /** TLS to the Temporal frontend; on when a CA, client certificate or API key is set (TEMPORAL_TLS=off turns it off). */
    temporalTls: switchField().optional(),
    /** PEM file of the CA that signed the frontend's certificate; unset: the system's roots. */
    temporalTlsCaPath: z.string().min(1).optional(),
    /** PEM files of the client certificate and its key (mTLS): both or neither. */
    temporalTlsCertPath: z.string().min(1).optional(),
    temporalTlsKeyPath: z.string().min(1).optional(),
    /** The name the frontend's certificate is checked against, when it differs from the address's host. */
    temporalTlsServerName: z.string().min(1).optional(),
    /** A Temporal Cloud API key, sent as a bearer token (TLS is then on). */
    temporalApiKey: z.string().min(1).optional(),
    taskQueue: z.string().min(1).default('keel'),
    /** Embedded state folder (PGlite data, dev-server history). */
    home: z.string().min(1).default('.keel'),
    /** What session maintenance (the Schedule and `keel maintenance`) does: warn only reports, enforce deletes. */
    maintenanceMode: z.enum(['warn', 'enforce'], { message: 'use warn or enforce' }).default('warn'),
    anthropicApiKey: z.string().min(1).optional(),
    anthropicBaseUrl: z.url('ANTHROPIC_BASE_URL must be an http(s) URL').optional(),
    model: z.string().min(1).default(DEFAULTS.model),
    /** Which API the chat model speaks: Anthropic Messages, or an OpenAI-compatible chat-completions endpoint. */
    modelProvider: z
      .enum(['anthropic', 'openai-compatible'], { message: 'use anthropic or openai-compatible' })
      .default('anthropic'),
    /** The chat model's endpoint when `modelProvider` is openai-compatible (config file `model.baseUrl`). */
    openAiBaseUrl: z.url('must be an http(s) URL').optional(),
    /** Bearer key of that endpoint (config file `model.apiKeyEnv` names the variable holding it). */
    openAiApiKey: z.string().min(1).optional(),
    /** Stream the chat model's tool turns (config file `model.streamToolTurns`); unset: stream, and learn when the server refuses. */
    openAiStreamToolTurns: z.boolean().optional(),
    /** The chat endpoint's requests in flight per process (config file `model.maxConcurrentRequests`); unset: 1 on loopback, else no limit. */
    openAiMaxConcurrentRequests: z.number().int().positive().optional(),
    /** Per-provider model windows (OpenClaw `models.providers.<provider>.models[].contextWindow`): first in window resolution. */
    models: modelWindowsSchema.optional(),
    /** The agent's `contextTokens` cap: lowers the resolved window, never raises it. */
    contextTokens: z.coerce.number().int().positive().optional(),
    /** The model call's max_tokens, held to the reserve of the window in force; unset: 4,096, at most half the reserve (`maxOutputTokensFor`). */
    maxOutputTokens: z.coerce.number().int().positive().optional(),
    /** The window when no per-provider model entry decides (OpenClaw's 200,000 default, settable). */
    contextWindowTokens: z.coerce.number().int().positive().default(DEFAULTS.contextWindowTokens),
    /** Tokens kept free for the reply; raised to `reserveTokensFloor`, and never more than half the window (`effectiveReserveTokens`). */
    reserveTokens: z.coerce.number().int().nonnegative().default(DEFAULTS.reserveTokens),
    /** The reserve's floor (KEEL_RESERVE_TOKENS_FLOOR); 0 turns it off, so reserveTokens applies as set. */
    reserveTokensFloor: z.coerce.number().int().nonnegative().default(DEFAULTS.reserveTokensFloor),
    /** Which context engine assembles the model's view: an id registered when the config is parsed. */
    contextEngine: z
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
    /** Options handed to the context engine's factory (budgeted: minPrunableToolChars, keepLastAssistants, pruningTtl; anthropic-native: see its options). */
    contextEngineOptions: z
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
    /** The work-style preset the file chose (src/context/work-style-presets.ts); its values are already in reserveTokens and contextEngineOptions. */
    workStyle: z.enum(WORK_STYLES, { message: `use one of ${WORK_STYLES.join(', ')}` }).optional(),
    /** OpenAI-compatible `/v1/embeddings` root for hybrid recall (KEEL_EMBEDDINGS_BASE_URL; config file `embeddings.baseUrl`); unset: keywords only. */
    embeddingsBaseUrl: z
      .url('KEEL_EMBEDDINGS_BASE_URL must be an http(s) URL such as http://127.0.0.1:11434/v1')
      .optional(),
    /** The embedding model (KEEL_EMBEDDINGS_MODEL; `embeddings.model`); vectors are kept per model, so a new name re-embeds. */
    embeddingsModel: z.string().min(1).optional(),
    /** Bearer key of the embeddings endpoint (KEEL_EMBEDDINGS_API_KEY; `embeddings.apiKeyEnv` names the variable). */
    embeddingsApiKey: z.string().min(1).optional(),
    /** Optional separate compaction model: by default an OpenAI-compatible endpoint (e.g. local Ollama). */
    compactionModelUrl: z.url().optional(),
    compactionModel: z.string().min(1).optional(),
    /** The compaction model's API; anthropic uses compactionModelUrl, else the chat model's Anthropic endpoint. */
    compactionModelProvider: z
      .enum(['anthropic', 'openai-compatible'], { message: 'use anthropic or openai-compatible' })
      .default('openai-compatible'),
    compactionModelApiKey: z.string().min(1).optional(),
    /** Path of a module exporting `registerTools(registry)`. */
    toolsModule: z.string().min(1).optional(),
    /**
     * How long one run of a tool may take when the tool names no timeout of its own (KEEL_TOOL_TIMEOUT_MS;
     * config file `toolTimeout`, e.g. "2m"). Past it the model gets a timeout error result.
     */
    toolTimeoutMs: toolTimeout.default(DEFAULTS.toolTimeoutMs),
    /** Timeouts of named tools, above the tool's own (config file `toolTimeouts`: { "<tool>": "10m" }). */
    toolTimeouts: z.record(z.string(), toolTimeout).optional(),
    /**
     * Tools whose calls wait for a person's approval: names, or patterns with `*` (KEEL_APPROVAL_TOOLS,
     * comma-separated; config file `approvals.tools`). A tool's own `approval` asks too.
     */
    approvalTools: z.array(z.string().min(1, 'use tool names or patterns such as "send_*"')).default([]),
    /** A call waiting for approval is denied as "timed out" after this long (KEEL_APPROVAL_TIMEOUT; `approvals.timeout`). */
    approvalTimeoutMs: approvalTimeout.default(DEFAULTS.approvalTimeoutMs),
    /** Who may approve this agent's calls, as people read it (`approvals.approvers`); shown with each pending call. */
    approvers: z.array(z.string().min(1)).optional(),
    /**
     * A turn's run budget (`runBudget` in the file; KEEL_MAX_MODEL_CALLS, KEEL_MAX_TURN_TOKENS): it stops
     * at the first limit reached, with one last call without tools that reports where it stands.
     * `none` (or null) is no limit; the step limit may be off only where a token limit is set.
     */
    maxModelCallsPerTurn: runLimit('model calls', 2).default(DEFAULTS.runBudget.maxModelCalls),
    maxTurnTokens: runLimit('tokens', 1).default(DEFAULTS.runBudget.maxTokens),
    /** A model stream silent this long fails as a retryable timeout (both model clients). */
    modelIdleTimeoutMs: z.coerce.number().int().positive().default(DEFAULTS.modelStreamIdleTimeoutMs),
    /** A compaction freeing less than this share of its input holds the next threshold compaction (KEEL_COMPACTION_MIN_RECLAIM). */
    compactionMinReclaimShare: z.coerce
      .number()
      .min(0, 'a share from 0 to 0.9')
      .max(0.9, 'a share from 0 to 0.9 (0 turns the hold off)')
      .default(DEFAULTS.compactionMinReclaimShare),
    /** A compaction summary takes at most this share of the window, however much it replaces (KEEL_SUMMARY_MAX_WINDOW_SHARE). */
    summaryMaxWindowShare: z.coerce
      .number()
      .min(0.005, 'a share from 0.005 to 0.25')
      .max(0.25, 'a share from 0.005 to 0.25 (a summary must leave room for the conversation)')
      .default(DEFAULTS.maxSummaryWindowShare),
    /**
     * Summarizer spend limit: model calls and tokens (input + output) per window, per session key and
     * per agent (KEEL_SUMMARIZER_SESSION_CALLS, …_SESSION_TOKENS, …_AGENT_CALLS, …_AGENT_TOKENS, window
     * KEEL_SUMMARIZER_SPEND_WINDOW_MINUTES). Unset: no limit. Past it a compaction writes the extractive summary.
     */
    summarizerSessionCalls: z.coerce.number().int().nonnegative('a whole number of calls ≥ 0').optional(),
    summarizerSessionTokens: z.coerce.number().int().nonnegative('a whole number of tokens ≥ 0').optional(),
    summarizerAgentCalls: z.coerce.number().int().nonnegative('a whole number of calls ≥ 0').optional(),
    summarizerAgentTokens: z.coerce.number().int().nonnegative('a whole number of tokens ≥ 0').optional(),
    summarizerSpendWindowMinutes: z.coerce.number().int().positive('a whole number of minutes > 0').default(60),
    /** Memory flush starts this many tokens below the compaction threshold (OpenClaw softThresholdTokens). */
    softThresholdTokens: z.coerce.number().int().nonnegative().default(DEFAULTS.softThresholdTokens),
    /** Model id for the silent memory-flush turn; default: the session's chat model (its override included). */
    memoryFlushModel: z.string().min(1).optional(),
    /** Preflight compaction when the active transcript exceeds this many bytes; 0 disables. */
    maxActiveTranscriptBytes: z.coerce.number().int().nonnegative().default(0),
    /** Session reset (OpenClaw): daily at resetHour in resetTimeZone, or after idleMinutes; whichever first. */
    resetMode: z.enum(['daily', 'idle', 'none'], { message: 'use daily, idle or none' }).default('daily'),
    resetHour: z.coerce.number().int().min(0).max(23).default(DEFAULTS.dailyResetHour),
    resetTimeZone: z
      .string()
      .refine(isKnownTimeZone, 'not a known IANA time zone; use a name such as "Europe/Berlin" or "UTC"')
      .default('UTC'),
    idleMinutes: z.coerce.number().int().positive().optional(),
    /**
     * Per-channel history limits (OpenClaw `channels.<provider>.historyLimit`, `dmHistoryLimit`,
     * `dms.<userId>.historyLimit`), as JSON in KEEL_HISTORY_LIMITS.
     */
    historyLimits: historyLimitsSchema.optional(),
    /**
     * Memory the worker may spend on its copies of sessions' active windows (KEEL_CONTEXT_CACHE_BYTES):
     * a turn then reads only the entries appended since; least recently used sessions go first; 0 disables.
     */
    contextCacheBytes: z.coerce.number().int().nonnegative().default(DEFAULTS.contextCacheBytes),
    /**
     * Session workflows the worker keeps in memory between their turns (KEEL_MAX_CACHED_WORKFLOWS); a
     * turn of one that was evicted replays its history first. About 1 MB each is the SDK's guidance.
     */
    maxCachedWorkflows: z.coerce.number().int().nonnegative().default(DEFAULTS.maxCachedWorkflows),
    /**
     * PostgreSQL connections one process may hold (KEEL_DATABASE_POOL_SIZE). Each turn's activities
     * hold one at a time; a worker running many sessions at once queues for them beyond this.
     */
    databasePoolSize: z.coerce
      .number()
      .int()
      .min(1, 'databasePoolSize must be at least 1')
      .default(DEFAULTS.databasePoolSize),
    /**
     * The statements every turn runs are prepared once per connection (KEEL_DATABASE_PREPARED_STATEMENTS,
     * default on). Off for a pooler that cannot keep them, such as PgBouncer before 1.21 in transaction mode.
     */
    databasePreparedStatements: switchField().default(true),
    /** A stopping worker lets in-flight activities finish this long (KEEL_SHUTDOWN_GRACE_MS). */
    shutdownGraceMs: z.coerce.number().int().nonnegative().default(DEFAULTS.workerShutdownGraceMs),
    /** Workspace folder: bootstrap files (AGENTS.md, …) and memory notes (`memory/YYYY-MM-DD.md`); unset → notes only in the database. */
    workspaceDir: z.string().min(1).optional(),
    /** What the agent may do with its workspace: rw, ro (read bootstrap files, no flush) or none. */
    workspaceAccess: z.enum(['rw', 'ro', 'none'], { message: 'use rw, ro or none' }).default('rw'),
    /** Workspace files are re-hashed this often as a fallback to the file watcher (seconds); 0 disables polling. */
    workspacePollSeconds: z.coerce.number().nonnegative().default(DEFAULTS.workspacePollSeconds),
    /** Watch the workspace folder for changes (off: only the poll notices them, e.g. where watchers are unreliable). */
    workspaceWatch: switchField().default(true),
    /** The agent's identity line, first in the system prompt. */
    identity: z.string().min(1).optional(),
    /** System prompt mode for main sessions (subagent, cron and hook sessions use minimal). */
    promptMode: z.enum(['full', 'minimal', 'none'], { message: 'use full, minimal or none' }).default('full'),
    /** Time zone the runtime section of the system prompt states the date in. */
    userTimeZone: z
      .string()
      .refine(isKnownTimeZone, 'not a known IANA time zone; use a name such as "Europe/Berlin" or "UTC"')
      .default('UTC'),
    /** Provider prompt caching (cache_control breakpoints on system, tools and the stable prefix). */
    promptCaching: switchField().default(true),
    /**
     * At or below this configured window (KEEL_SMALL_WINDOW_TOKENS), main sessions get the minimal
     * system prompt instead of the full one and the agent no subagent tools; 0 turns it off.
     */
    smallWindowTokens: z.coerce
      .number()
      .int()
      .nonnegative('use tokens ≥ 0 (0 turns it off)')
      .default(DEFAULTS.smallWindowTokens),
    /** Threshold and manual compactions ask for the summary on the last turn's cached request (see README, "Compaction"). */
    compactionPromptCache: switchField().default(DEFAULTS.compactionPromptCache),
    /** How deep subagents may nest: 1 lets the main agent spawn and its children not (OpenClaw's maxSpawnDepth). */
    subagentMaxDepth: z.coerce.number().int().nonnegative('0 turns spawning off').default(DEFAULTS.subagentMaxDepth),
    /** Subagents one session may have running at once; a spawn past it is refused with a tool error. */
    subagentMaxChildren: z.coerce.number().int().positive().default(DEFAULTS.subagentMaxChildren),
    /** AES-256-GCM keys, `id:base64key[,…]` (KEEL_ENCRYPTION_KEYS): set → Temporal payloads are encrypted. */
    encryptionKeys: z.string().min(1).optional(),
    /** Which of those keys new data is sealed with (rotation); default: the first listed. */
    encryptionKeyId: z.string().min(1).optional(),
    /** Also encrypt entry payloads, summaries and memory notes in PostgreSQL (needs encryptionKeys). */
    encryptAtRest: switchField().default(false),
    /** Port of the codec server the Temporal Web UI decodes payloads through; unset → off. */
    codecServerPort: z.coerce.number().int().min(0).max(65535).optional(),
    /** Bearer token the codec server requires (KEEL_CODEC_SERVER_TOKEN); required when the port is set. */
    codecServerToken: z.string().min(16, 'use at least 16 characters (`openssl rand -hex 24`)').optional(),
    /** Web UI origins the codec server answers cross-origin (KEEL_CODEC_SERVER_ORIGINS, comma-separated); default: the local dev UI. */
    codecServerOrigins: z
      .array(
        z.string().refine(isWebOrigin, 'each origin is scheme://host[:port], such as https://temporal-ui.example.com'),
      )
      .min(1)
      .default(['http://localhost:8233', 'http://127.0.0.1:8233']),
    /** Agents this worker and its clients serve (KEEL_ALLOWED_AGENTS, comma-separated); unset → all. */
    allowedAgents: z.array(z.string().min(1)).min(1).optional(),
    /** Port of the HTTP API, `keel serve` and `keel dev` (KEEL_API_PORT). */
    apiPort: z.coerce.number().int().min(0).max(65535).default(DEFAULTS.apiPort),
    /** Address the HTTP API binds (KEEL_API_HOST); beyond loopback it needs KEEL_API_TOKEN. */
    apiHost: z.string().min(1).default(DEFAULTS.apiHost),
    /** Bearer token every HTTP API request must carry (KEEL_API_TOKEN); environment only: it is a secret. */
    apiToken: z.string().min(16, 'use at least 16 characters (`openssl rand -hex 24`)').optional(),
  })
  .superRefine(coherentModelSettings)
  .superRefine(coherentSecuritySettings)
  .superRefine(boundedRuns);

/** Encryption settings that cannot work together fail at start, naming the variable to set. */
function coherentSecuritySettings(
  c: {
    encryptionKeys?: string | undefined;
    encryptionKeyId?: string | undefined;
    encryptAtRest: boolean;
    codecServerPort?: number | undefined;
    codecServerToken?: string | undefined;
  },
  ctx: z.RefinementCtx,
): void {
  if (c.encryptionKeys) {
    try {
      parseKeyRing(c.encryptionKeys, c.encryptionKeyId);
    } catch (err) {
      ctx.addIssue({
        code: 'custom',
        path: ['encryptionKeys'],
        message: (err as Error).message.replace(/^KEEL_ENCRYPTION_KEYS:\s*/, ''),
      });
    }
  } else if (c.encryptionKeyId) {
    ctx.addIssue({
      code: 'custom',
      path: ['encryptionKeyId'],
      message: 'names a key but KEEL_ENCRYPTION_KEYS is not set',
    });
  }
  if (c.encryptAtRest && !c.encryptionKeys) {
    ctx.addIssue({
      code: 'custom',
      path: ['encryptAtRest'],
      message: 'encryption at rest needs keys: set KEEL_ENCRYPTION_KEYS ("id:base64key", `openssl rand -base64 32`)',
    });
  }
  if (c.codecServerPort !== undefined && !c.codecServerToken) {
    ctx.addIssue({
      code: 'custom',
      path: ['codecServerPort'],
      message: 'the codec server needs a bearer token: set KEEL_CODEC_SERVER_TOKEN (`openssl rand -hex 24`)',
    });
  }
  if (c.codecServerPort !== undefined && !c.encryptionKeys) {
    ctx.addIssue({
      code: 'custom',
      path: ['codecServerPort'],
      message: 'a codec server without KEEL_ENCRYPTION_KEYS has nothing to decode; set the keys or unset the port',
    });
  }
}

/** An http(s) origin as a browser sends it (a trailing slash is tolerated). */
function isWebOrigin(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === text.replace(/\/+$/, '');
  } catch {
    return false;
  }
}

/** The configured key ring, or undefined when encryption is off. */
export function keyRingFor(config: Pick<KeelConfig, 'encryptionKeys' | 'encryptionKeyId'>): KeyRing | undefined {
  return config.encryptionKeys ? parseKeyRing(config.encryptionKeys, config.encryptionKeyId) : undefined;
}

/** A run limit: a whole number from `least` (a step limit keeps one call for the report), or `none` / null for no limit. */
function runLimit(unit: string, least: number) {
  return z.union([
    z.null(),
    z.literal('none').transform(() => null),
    z.coerce.number().int(`a whole number of ${unit}, or "none"`).min(least, `use ${unit} ≥ ${least}, or "none"`),
  ]);
}

/** No run is unbounded: the step limit may be off only where a token limit is set. */
function boundedRuns(c: { maxModelCallsPerTurn: number | null; maxTurnTokens: number | null }, ctx: z.RefinementCtx) {
  if (c.maxModelCallsPerTurn !== null || c.maxTurnTokens !== null) return;
  ctx.addIssue({
    code: 'custom',
    path: ['maxModelCallsPerTurn'],
    message:
      'a run needs a limit: set a token limit (KEEL_MAX_TURN_TOKENS, runBudget.maxTokens) to turn the step limit off',
  });
}

/** Settings that are each valid but contradict one another would fail every turn, not at start. */
function coherentModelSettings(
  c: {
    contextWindowTokens: number;
    reserveTokens: number;
    reserveTokensFloor: number;
    maxOutputTokens?: number | undefined;
    modelProvider: string;
    openAiBaseUrl?: string | undefined;
    compactionModel?: string | undefined;
    compactionModelUrl?: string | undefined;
    compactionModelProvider: string;
    embeddingsBaseUrl?: string | undefined;
    embeddingsModel?: string | undefined;
  },
  ctx: z.RefinementCtx,
): void {
  if (Boolean(c.embeddingsBaseUrl) !== Boolean(c.embeddingsModel)) {
    ctx.addIssue({
      code: 'custom',
      path: [c.embeddingsBaseUrl ? 'embeddingsModel' : 'embeddingsBaseUrl'],
      message: c.embeddingsBaseUrl
        ? 'an embeddings endpoint needs its model: set KEEL_EMBEDDINGS_MODEL (config file embeddings.model), e.g. text-embedding-3-small'
        : 'an embedding model needs its endpoint: set KEEL_EMBEDDINGS_BASE_URL (config file embeddings.baseUrl), e.g. http://127.0.0.1:11434/v1',
    });
  }
  // The reserve needs no check: it never takes more than half the window (effectiveReserveTokens).
  if (c.maxOutputTokens !== undefined && c.maxOutputTokens >= c.contextWindowTokens) {
    ctx.addIssue({
      code: 'custom',
      path: ['maxOutputTokens'],
      message: `${c.maxOutputTokens} output tokens do not fit the ${c.contextWindowTokens}-token context window; set fewer (each call asks for at most the reserve, ${maxOutputTokensFor(c.contextWindowTokens, c)} here), or unset it for the default`,
    });
  }
  if (c.modelProvider === 'openai-compatible' && !c.openAiBaseUrl) {
    ctx.addIssue({
      code: 'custom',
      path: ['openAiBaseUrl'],
      message: 'an openai-compatible model needs its endpoint: set model.baseUrl in the config file',
    });
  }
  if (c.compactionModel && !c.compactionModelUrl && c.compactionModelProvider === 'openai-compatible') {
    ctx.addIssue({
      code: 'custom',
      path: ['compactionModel'],
      message: 'names a summarizer model but KEEL_COMPACTION_MODEL_URL (its OpenAI-compatible endpoint) is not set',
    });
  }
}

export type KeelConfig = z.infer<typeof keelConfigSchema>;

/** Maps environment variables to the config, failing with the variable's name on bad values. */
export function configFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Partial<KeelConfig> = {},
  file?: ConfigFileValues,
): KeelConfig {
  const fromEnv = {
    databaseUrl: env.DATABASE_URL || undefined,
    temporalAddress: env.TEMPORAL_ADDRESS || undefined,
    maintenanceMode: env.KEEL_MAINTENANCE_MODE || undefined,
    temporalNamespace: env.TEMPORAL_NAMESPACE || undefined,
    temporalTls: envSwitch(env.TEMPORAL_TLS),
    temporalTlsCaPath: env.TEMPORAL_TLS_SERVER_CA_CERT_PATH || undefined,
    temporalTlsCertPath: env.TEMPORAL_TLS_CLIENT_CERT_PATH || undefined,
    temporalTlsKeyPath: env.TEMPORAL_TLS_CLIENT_KEY_PATH || undefined,
    temporalTlsServerName: env.TEMPORAL_TLS_SERVER_NAME || undefined,
    temporalApiKey: env.TEMPORAL_API_KEY || undefined,
    taskQueue: env.KEEL_TASK_QUEUE || undefined,
    home: env.KEEL_HOME || undefined,
    anthropicApiKey: env.ANTHROPIC_API_KEY || undefined,
    anthropicBaseUrl: env.ANTHROPIC_BASE_URL || undefined,
    model: env.KEEL_MODEL || undefined,
    maxOutputTokens: env.KEEL_MAX_OUTPUT_TOKENS || undefined,
    contextWindowTokens: env.KEEL_CONTEXT_WINDOW || undefined,
    reserveTokens: env.KEEL_RESERVE_TOKENS || undefined,
    reserveTokensFloor: env.KEEL_RESERVE_TOKENS_FLOOR || undefined,
    contextEngine: env.KEEL_CONTEXT_ENGINE || undefined,
    compactionModelUrl: env.KEEL_COMPACTION_MODEL_URL || undefined,
    embeddingsBaseUrl: env.KEEL_EMBEDDINGS_BASE_URL || undefined,
    embeddingsModel: env.KEEL_EMBEDDINGS_MODEL || undefined,
    embeddingsApiKey: env.KEEL_EMBEDDINGS_API_KEY || undefined,
    compactionModel: env.KEEL_COMPACTION_MODEL || undefined,
    modelIdleTimeoutMs: env.KEEL_MODEL_IDLE_TIMEOUT_MS || undefined,
    workspaceDir: env.KEEL_WORKSPACE || undefined,
    workspaceAccess: env.KEEL_WORKSPACE_ACCESS || undefined,
    workspacePollSeconds: env.KEEL_WORKSPACE_POLL_SECONDS || undefined,
    workspaceWatch: envSwitch(env.KEEL_WORKSPACE_WATCH),
    identity: env.KEEL_IDENTITY || undefined,
    promptMode: env.KEEL_PROMPT_MODE || undefined,
    smallWindowTokens: env.KEEL_SMALL_WINDOW_TOKENS || undefined,
    userTimeZone: env.KEEL_TIMEZONE || undefined,
    promptCaching: envSwitch(env.KEEL_PROMPT_CACHING),
    compactionPromptCache: envSwitch(env.KEEL_COMPACTION_PROMPT_CACHE),
    softThresholdTokens: env.KEEL_SOFT_THRESHOLD_TOKENS || undefined,
    compactionMinReclaimShare: env.KEEL_COMPACTION_MIN_RECLAIM || undefined,
    summaryMaxWindowShare: env.KEEL_SUMMARY_MAX_WINDOW_SHARE || undefined,
    summarizerSessionCalls: env.KEEL_SUMMARIZER_SESSION_CALLS || undefined,
    summarizerSessionTokens: env.KEEL_SUMMARIZER_SESSION_TOKENS || undefined,
    summarizerAgentCalls: env.KEEL_SUMMARIZER_AGENT_CALLS || undefined,
    summarizerAgentTokens: env.KEEL_SUMMARIZER_AGENT_TOKENS || undefined,
    summarizerSpendWindowMinutes: env.KEEL_SUMMARIZER_SPEND_WINDOW_MINUTES || undefined,
    subagentMaxDepth: env.KEEL_SUBAGENT_MAX_DEPTH || undefined,
    subagentMaxChildren: env.KEEL_SUBAGENT_MAX_CHILDREN || undefined,
    resetMode: env.KEEL_RESET_MODE || undefined,
    historyLimits: env.KEEL_HISTORY_LIMITS ? parseJson(env.KEEL_HISTORY_LIMITS) : undefined,
    resetHour: env.KEEL_RESET_HOUR || undefined,
    resetTimeZone: env.KEEL_RESET_TIMEZONE || undefined,
    idleMinutes: env.KEEL_IDLE_MINUTES || undefined,
    memoryFlushModel: env.KEEL_MEMORY_FLUSH_MODEL || undefined,
    shutdownGraceMs: env.KEEL_SHUTDOWN_GRACE_MS || undefined,
    contextCacheBytes: env.KEEL_CONTEXT_CACHE_BYTES ? parseByteSize(env.KEEL_CONTEXT_CACHE_BYTES) : undefined,
    maxCachedWorkflows: env.KEEL_MAX_CACHED_WORKFLOWS || undefined,
    databasePoolSize: env.KEEL_DATABASE_POOL_SIZE || undefined,
    databasePreparedStatements: envSwitch(env.KEEL_DATABASE_PREPARED_STATEMENTS),
    maxActiveTranscriptBytes: env.KEEL_MAX_ACTIVE_TRANSCRIPT_BYTES
      ? parseByteSize(env.KEEL_MAX_ACTIVE_TRANSCRIPT_BYTES)
      : undefined,
    toolsModule: env.KEEL_TOOLS_MODULE || undefined,
    toolTimeoutMs: env.KEEL_TOOL_TIMEOUT_MS || undefined,
    approvalTools: env.KEEL_APPROVAL_TOOLS
      ? env.KEEL_APPROVAL_TOOLS.split(',')
          .map((t) => t.trim())
          .filter(Boolean)
      : undefined,
    approvalTimeoutMs: env.KEEL_APPROVAL_TIMEOUT || undefined,
    maxModelCallsPerTurn: env.KEEL_MAX_MODEL_CALLS || undefined,
    maxTurnTokens: env.KEEL_MAX_TURN_TOKENS || undefined,
    encryptionKeys: env.KEEL_ENCRYPTION_KEYS || undefined,
    encryptionKeyId: env.KEEL_ENCRYPTION_KEY_ID || undefined,
    encryptAtRest: envSwitch(env.KEEL_ENCRYPT_AT_REST),
    codecServerPort: env.KEEL_CODEC_SERVER_PORT || undefined,
    codecServerToken: env.KEEL_CODEC_SERVER_TOKEN || undefined,
    codecServerOrigins: env.KEEL_CODEC_SERVER_ORIGINS
      ? env.KEEL_CODEC_SERVER_ORIGINS.split(',')
          .map((o) => o.trim())
          .filter(Boolean)
      : undefined,
    allowedAgents: env.KEEL_ALLOWED_AGENTS
      ? env.KEEL_ALLOWED_AGENTS.split(',')
          .map((a) => a.trim())
          .filter(Boolean)
      : undefined,
    apiPort: env.KEEL_API_PORT || undefined,
    apiHost: env.KEEL_API_HOST || undefined,
    apiToken: env.KEEL_API_TOKEN || undefined,
  };
  // Environment variables override the config file's top-level values; code overrides both.
  const setInEnv = Object.fromEntries(Object.entries(fromEnv).filter(([, v]) => v !== undefined));
  const raw = { ...file?.values, ...setInEnv, ...overrides };
  const parsed = keelConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const name = (key: string) =>
      file && key in file.values && !(key in setInEnv)
        ? `${file.path}: ${file.names[key] ?? key}`
        : (ENV_NAMES[key] ?? key);
    const lines = parsed.error.issues.map((i) => {
      const setting = name(String(i.path[0]));
      if (i.path.length === 0) return `  ${setting}: ${i.message}`;
      return `  ${setting}: ${i.message} (got ${shownSettingValue(setting, valueAtPath(raw, i.path))})`;
    });
    throw new ConfigError(`invalid Keel configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}

const ENV_NAMES: Record<string, string> = {
  databaseUrl: 'DATABASE_URL',
  temporalAddress: 'TEMPORAL_ADDRESS',
  maintenanceMode: 'KEEL_MAINTENANCE_MODE',
  temporalNamespace: 'TEMPORAL_NAMESPACE',
  temporalTls: 'TEMPORAL_TLS',
  temporalTlsCaPath: 'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
  temporalTlsCertPath: 'TEMPORAL_TLS_CLIENT_CERT_PATH',
  temporalTlsKeyPath: 'TEMPORAL_TLS_CLIENT_KEY_PATH',
  temporalTlsServerName: 'TEMPORAL_TLS_SERVER_NAME',
  temporalApiKey: 'TEMPORAL_API_KEY',
  taskQueue: 'KEEL_TASK_QUEUE',
  home: 'KEEL_HOME',
  anthropicApiKey: 'ANTHROPIC_API_KEY',
  anthropicBaseUrl: 'ANTHROPIC_BASE_URL',
  model: 'KEEL_MODEL',
  maxOutputTokens: 'KEEL_MAX_OUTPUT_TOKENS',
  contextWindowTokens: 'KEEL_CONTEXT_WINDOW',
  reserveTokens: 'KEEL_RESERVE_TOKENS',
  reserveTokensFloor: 'KEEL_RESERVE_TOKENS_FLOOR',
  contextEngine: 'KEEL_CONTEXT_ENGINE',
  compactionModelUrl: 'KEEL_COMPACTION_MODEL_URL',
  compactionModel: 'KEEL_COMPACTION_MODEL',
  modelIdleTimeoutMs: 'KEEL_MODEL_IDLE_TIMEOUT_MS',
  workspaceDir: 'KEEL_WORKSPACE',
  workspaceAccess: 'KEEL_WORKSPACE_ACCESS',
  workspacePollSeconds: 'KEEL_WORKSPACE_POLL_SECONDS',
  workspaceWatch: 'KEEL_WORKSPACE_WATCH',
  identity: 'KEEL_IDENTITY',
  promptMode: 'KEEL_PROMPT_MODE',
  smallWindowTokens: 'KEEL_SMALL_WINDOW_TOKENS',
  userTimeZone: 'KEEL_TIMEZONE',
  promptCaching: 'KEEL_PROMPT_CACHING',
  compactionPromptCache: 'KEEL_COMPACTION_PROMPT_CACHE',
  softThresholdTokens: 'KEEL_SOFT_THRESHOLD_TOKENS',
  compactionMinReclaimShare: 'KEEL_COMPACTION_MIN_RECLAIM',
  summaryMaxWindowShare: 'KEEL_SUMMARY_MAX_WINDOW_SHARE',
  summarizerSessionCalls: 'KEEL_SUMMARIZER_SESSION_CALLS',
  summarizerSessionTokens: 'KEEL_SUMMARIZER_SESSION_TOKENS',
  summarizerAgentCalls: 'KEEL_SUMMARIZER_AGENT_CALLS',
  summarizerAgentTokens: 'KEEL_SUMMARIZER_AGENT_TOKENS',
  summarizerSpendWindowMinutes: 'KEEL_SUMMARIZER_SPEND_WINDOW_MINUTES',
  subagentMaxDepth: 'KEEL_SUBAGENT_MAX_DEPTH',
  subagentMaxChildren: 'KEEL_SUBAGENT_MAX_CHILDREN',
  resetMode: 'KEEL_RESET_MODE',
  historyLimits: 'KEEL_HISTORY_LIMITS',
  resetHour: 'KEEL_RESET_HOUR',
  resetTimeZone: 'KEEL_RESET_TIMEZONE',
  idleMinutes: 'KEEL_IDLE_MINUTES',
  memoryFlushModel: 'KEEL_MEMORY_FLUSH_MODEL',
  shutdownGraceMs: 'KEEL_SHUTDOWN_GRACE_MS',
  contextCacheBytes: 'KEEL_CONTEXT_CACHE_BYTES',
  maxCachedWorkflows: 'KEEL_MAX_CACHED_WORKFLOWS',
  databasePoolSize: 'KEEL_DATABASE_POOL_SIZE',
  databasePreparedStatements: 'KEEL_DATABASE_PREPARED_STATEMENTS',
  maxActiveTranscriptBytes: 'KEEL_MAX_ACTIVE_TRANSCRIPT_BYTES',
  toolsModule: 'KEEL_TOOLS_MODULE',
  toolTimeoutMs: 'KEEL_TOOL_TIMEOUT_MS',
  approvalTools: 'KEEL_APPROVAL_TOOLS',
  approvalTimeoutMs: 'KEEL_APPROVAL_TIMEOUT',
  maxModelCallsPerTurn: 'KEEL_MAX_MODEL_CALLS',
  maxTurnTokens: 'KEEL_MAX_TURN_TOKENS',
  encryptionKeys: 'KEEL_ENCRYPTION_KEYS',
  encryptionKeyId: 'KEEL_ENCRYPTION_KEY_ID',
  encryptAtRest: 'KEEL_ENCRYPT_AT_REST',
  codecServerPort: 'KEEL_CODEC_SERVER_PORT',
  codecServerToken: 'KEEL_CODEC_SERVER_TOKEN',
  codecServerOrigins: 'KEEL_CODEC_SERVER_ORIGINS',
  allowedAgents: 'KEEL_ALLOWED_AGENTS',
  apiPort: 'KEEL_API_PORT',
  apiHost: 'KEEL_API_HOST',
  apiToken: 'KEEL_API_TOKEN',
};

/** Top-level values of a config file, under the environment; `names` gives each key's JSON path in the file. */
export interface ConfigFileValues {
  readonly path: string;
  readonly values: Partial<Record<keyof KeelConfig, unknown>>;
  readonly names: Partial<Record<string, string>>;
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

/** A configuration value is missing or malformed; the message names the variable. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}
