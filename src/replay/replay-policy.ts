/**
 * A replay policy: the subset of Keel's configuration that decides what a session's context looks
 * like (window, reserve, kept tail, context engine, compaction thresholds), as a JSON file. Values
 * are checked with the config's own zod schemas; a key the replay does not know is refused by name.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { z } from 'zod';
import { keelConfigSchema, type KeelConfig } from '../config/keel-config';
import { configuredWindow } from '../config/configured-window';
import { mainPromptMode } from '../config/small-window';
import { DEFAULTS } from '../config/defaults';
import { buildSystemPrompt } from '../context/system-prompt';
import {
  MEMORY_RECALL,
  MESSAGING,
  SAFETY,
  TOOL_CALL_STYLE,
  promptModeFor,
  runtimeSection,
} from '../context/prompt-sections';
import { boundedEstimate } from '../runtime/bounded-estimate';

// The config's own schemas, without their defaults: a key the file leaves out keeps the agent's value.
const config = keelConfigSchema.shape;
const tokens = z
  .number({ message: 'use a whole number of tokens' })
  .int('use a whole number of tokens')
  .nonnegative('use tokens ≥ 0');

/** What a policy file may set. Keel config keys keep their meaning; the last three exist only for what-ifs. */
const policyFileSchema = z.strictObject({
  /** Shown in reports; default: the file name. */
  name: z.string().min(1).max(80).optional(),
  contextWindowTokens: config.contextWindowTokens.unwrap().optional(),
  contextTokens: config.contextTokens,
  reserveTokens: config.reserveTokens.unwrap().optional(),
  reserveTokensFloor: config.reserveTokensFloor.unwrap().optional(),
  softThresholdTokens: config.softThresholdTokens.unwrap().optional(),
  compactionMinReclaimShare: config.compactionMinReclaimShare.unwrap().optional(),
  contextEngine: config.contextEngine.unwrap().optional(),
  contextEngineOptions: config.contextEngineOptions,
  historyLimits: config.historyLimits,
  /** Recent tail an automatic compaction keeps (Keel: 20,000, at most a quarter of the window). */
  keepRecentTokens: tokens.optional(),
  /** Tokens every model call spends on the system prompt and tool definitions. */
  overheadTokens: tokens.optional(),
  /** Who writes compaction summaries: the extractive summary (default), or the configured summarizer model. */
  summarizer: z.enum(['extractive', 'model'], { message: 'use "extractive" or "model"' }).optional(),
});

type PolicyFile = z.output<typeof policyFileSchema>;

/** The settings one replay runs with, every default resolved. */
export interface ReplayPolicy {
  readonly name: string;
  readonly contextWindow: number;
  readonly reserveTokens: number;
  readonly reserveTokensFloor: number;
  /** Before the quarter-of-the-window cap the compaction applies. */
  readonly keepRecentTokens: number;
  readonly softThresholdTokens: number;
  readonly compactionMinReclaimShare: number;
  readonly contextEngine: string;
  readonly contextEngineOptions?: KeelConfig['contextEngineOptions'];
  /** The chat model's provider: its turn rules shape the context, as on the worker. */
  readonly modelProvider: KeelConfig['modelProvider'];
  readonly historyLimits?: KeelConfig['historyLimits'];
  readonly overheadTokens: number;
  readonly summarizer: 'extractive' | 'model';
}

/** A policy file that cannot be used; the message names the file and the key. */
export class ReplayPolicyError extends Error {
  override readonly name = 'ReplayPolicyError';
}

const KNOWN_KEYS = Object.keys(policyFileSchema.shape);

/** Reads and checks a policy file; `base` is the agent's configuration the policy overrides. */
export function readReplayPolicy(path: string, base: KeelConfig, sessionKey = 'agent:main:main'): ReplayPolicy {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ReplayPolicyError(
      `${path}: ${err instanceof SyntaxError ? `not valid JSON (${err.message}); fix the syntax` : `cannot read it (${(err as Error).message})`}`,
    );
  }
  return parseReplayPolicy(json, base, {
    source: path,
    defaultName: basename(path).replace(/\.json$/i, ''),
    sessionKey,
  });
}

/** Checks a policy object (a parsed file) over `base`; errors name `source` and each bad key. */
export function parseReplayPolicy(
  json: unknown,
  base: KeelConfig,
  opts: { source: string; defaultName: string; sessionKey?: string },
): ReplayPolicy {
  const fail = (lines: string[]) =>
    new ReplayPolicyError(`invalid replay policy ${opts.source}:\n${lines.map((l) => `  ${l}`).join('\n')}`);
  const parsed = policyFileSchema.safeParse(json);
  if (!parsed.success) {
    throw fail(
      parsed.error.issues.flatMap((issue) =>
        issue.code === 'unrecognized_keys' && issue.path.length === 0
          ? issue.keys.map(
              (k) => `${k}: not a replay policy setting (check the spelling); known settings: ${KNOWN_KEYS.join(', ')}`,
            )
          : [`${issue.path.join('.') || '(top level)'}: ${issue.message}`],
      ),
    );
  }
  const file: PolicyFile = parsed.data;
  const { name, keepRecentTokens, overheadTokens, summarizer, ...overrides } = file;
  // The merged settings must still make a coherent Keel configuration (the reserve fits the window, …).
  const merged = keelConfigSchema.safeParse({ ...base, ...definedOnly(overrides) });
  if (!merged.success)
    throw fail(merged.error.issues.map((i) => `${String(i.path[0] ?? '(top level)')}: ${i.message}`));
  const c = merged.data;
  return {
    name: name ?? opts.defaultName,
    contextWindow: configuredWindow(c).tokens,
    reserveTokens: c.reserveTokens,
    reserveTokensFloor: c.reserveTokensFloor,
    keepRecentTokens: keepRecentTokens ?? DEFAULTS.keepRecentTokens,
    softThresholdTokens: c.softThresholdTokens,
    compactionMinReclaimShare: c.compactionMinReclaimShare,
    contextEngine: c.contextEngine,
    modelProvider: c.modelProvider,
    ...(c.contextEngineOptions ? { contextEngineOptions: c.contextEngineOptions } : {}),
    ...(c.historyLimits ? { historyLimits: c.historyLimits } : {}),
    overheadTokens: overheadTokens ?? baseOverheadTokens(c, opts.sessionKey ?? 'agent:main:main'),
    summarizer: summarizer ?? 'extractive',
  };
}

/** The policy of the agent's own configuration (what the session ran with, as far as config says). */
export function currentReplayPolicy(base: KeelConfig, sessionKey = 'agent:main:main'): ReplayPolicy {
  return parseReplayPolicy({}, base, { source: '(current configuration)', defaultName: 'current', sessionKey });
}

/**
 * Estimated tokens of the system prompt a call sends for the session: Keel's standard sections,
 * without tool definitions or workspace files (the replay cannot know which the worker had); a
 * policy sets `overheadTokens` to count them.
 */
function baseOverheadTokens(c: KeelConfig, sessionKey: string): number {
  let mode = mainPromptMode(c);
  try {
    mode = promptModeFor(sessionKey, mode);
  } catch {
    // A key Keel cannot parse (an imported transcript's): the configured mode.
  }
  const text = buildSystemPrompt(mode, {
    ...(c.identity ? { identity: c.identity } : {}),
    toolCallStyle: TOOL_CALL_STYLE,
    safety: SAFETY,
    memory: MEMORY_RECALL,
    messaging: MESSAGING,
    runtime: runtimeSection(c.model, new Date(0), c.userTimeZone),
  });
  return text === '' ? 0 : boundedEstimate({ role: 'user', content: text });
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
