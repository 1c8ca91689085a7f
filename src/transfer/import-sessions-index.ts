import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { Database, NewSessionRow } from '../store/schema';
import { insertImportedSession } from '../store/sessions-repo';
import { InvalidSessionKeyError, parseSessionKey } from '../sessions/session-key';
import type { ImportedSessionState } from './settle-imported-session';

/** Epoch ms (OpenClaw writes `Date.now()`) or an ISO string; anything else is ignored. */
const instant = z
  .union([z.number(), z.string()])
  .nullish()
  .transform((v) => {
    if (v === null || v === undefined) return undefined;
    const ms = typeof v === 'number' ? v : Date.parse(v);
    return Number.isFinite(ms) ? new Date(ms) : undefined;
  });
const text = z.string().nullish();
const count = z.number().nullish();

/**
 * One `sessions.json` value (OpenClaw's session store schema), loose: unknown fields are ignored,
 * not rejected, because the index grew fields over many OpenClaw versions.
 */
export const importedSessionEntrySchema = z.looseObject({
  sessionId: z.string().min(1),
  sessionFile: text,
  updatedAt: instant,
  sessionStartedAt: instant,
  lastInteractionAt: instant,
  chatType: text,
  channel: text,
  provider: text,
  lastChannel: text,
  label: text,
  subject: text,
  displayName: text,
  modelOverride: text,
  providerOverride: text,
  authProfileOverride: text,
  inputTokens: count,
  outputTokens: count,
  totalTokens: count,
  contextTokens: count,
  totalTokensFresh: z.boolean().nullish(),
  compactionCount: count,
  memoryFlushAt: instant,
  memoryFlushCompactionCount: count,
});
export type ImportedSessionEntry = z.infer<typeof importedSessionEntrySchema>;

/** Session toggles kept in `sessions.toggles` (OpenClaw's session toggles). */
const TOGGLE_FIELDS = ['thinkingLevel', 'verboseLevel', 'reasoningLevel', 'elevatedLevel', 'sendPolicy'] as const;
/** Delivery metadata kept in `sessions.delivery` (where replies go: channel, peer, thread). */
const DELIVERY_FIELDS = [
  'deliveryContext',
  'origin',
  'lastChannel',
  'lastTo',
  'lastAccountId',
  'lastThreadId',
  'room',
  'space',
  'groupId',
  'subject',
] as const;

/** The outcome of one index entry; a session created or found carries its context figure and freshness. */
export interface IndexEntryReport extends Partial<ImportedSessionState> {
  sessionKey: string;
  sessionId?: string;
  status: 'created' | 'exists' | 'skipped';
  reason?: string;
}

/** A parsed index: its entries' outcomes and the transcript file each kept entry points at. */
export interface IndexImportReport {
  file: string;
  entries: IndexEntryReport[];
  /** Resolved transcript path → the session it belongs to. */
  transcripts: Map<string, { sessionId: string; sessionKey: string }>;
  reason?: string;
}

/**
 * Imports a `sessions.json` index (sessionKey → SessionEntry) as `sessions` rows of `agentId`.
 * A key of another agent (`agent:<other>:...`) or an invalid key is skipped with its reason; an
 * existing row is never overwritten (`exists`), so a re-import changes nothing. Transcript paths
 * resolve against the index's folder (`sessionFile`, else `<sessionId>.jsonl`).
 */
export async function importSessionIndex(
  db: Kysely<Database>,
  agentId: string,
  file: string,
  now: Date,
): Promise<IndexImportReport> {
  const report: IndexImportReport = { file, entries: [], transcripts: new Map() };
  let raw: unknown;
  try {
    raw = JSON.parse((await readFile(file, 'utf8')).replace(/^\uFEFF/, ''));
  } catch (err) {
    return { ...report, reason: `cannot read index: ${(err as Error).message}` };
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ...report, reason: 'index is not a JSON object of sessionKey → session entry' };
  }
  for (const [sessionKey, value] of Object.entries(raw)) {
    const keyProblem = checkIndexKey(sessionKey, agentId);
    if (keyProblem) {
      report.entries.push({ sessionKey, status: 'skipped', reason: keyProblem });
      continue;
    }
    const parsed = importedSessionEntrySchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      report.entries.push({
        sessionKey,
        status: 'skipped',
        reason: `${issue.path.join('.') || '(entry)'}: ${issue.message}`,
      });
      continue;
    }
    const entry = parsed.data;
    const created = await insertImportedSession(db, sessionRow(agentId, sessionKey, entry, now));
    report.entries.push({ sessionKey, sessionId: entry.sessionId, status: created ? 'created' : 'exists' });
    const transcript = entry.sessionFile
      ? isAbsolute(entry.sessionFile)
        ? entry.sessionFile
        : join(dirname(file), entry.sessionFile)
      : join(dirname(file), `${entry.sessionId}.jsonl`);
    report.transcripts.set(resolve(transcript), { sessionId: entry.sessionId, sessionKey });
  }
  return report;
}

/** Why `sessionKey` cannot become a session of `agentId` (invalid, or another agent's), else undefined. */
export function checkIndexKey(sessionKey: string, agentId: string): string | undefined {
  try {
    const parsed = parseSessionKey(sessionKey);
    if (parsed.agentId !== undefined && parsed.agentId !== agentId) {
      return `session key belongs to agent "${parsed.agentId}"; import it with agentId "${parsed.agentId}"`;
    }
    return undefined;
  } catch (err) {
    if (err instanceof InvalidSessionKeyError) return err.message;
    throw err;
  }
}

function pick(entry: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) if (entry[f] !== undefined && entry[f] !== null) out[f] = entry[f];
  return out;
}

/** Maps a SessionEntry to a row; missing times fall back to each other, then to `now`. */
export function sessionRow(agentId: string, sessionKey: string, e: ImportedSessionEntry, now: Date): NewSessionRow {
  const updatedAt = e.updatedAt ?? e.lastInteractionAt ?? e.sessionStartedAt ?? now;
  const delivery = pick(e, DELIVERY_FIELDS);
  const tokens = (n: number | null | undefined) => Math.max(0, Math.round(n ?? 0));
  return {
    agent_id: agentId,
    session_key: sessionKey,
    session_id: e.sessionId,
    session_started_at: e.sessionStartedAt ?? updatedAt,
    last_interaction_at: e.lastInteractionAt ?? updatedAt,
    updated_at: updatedAt,
    chat_type: e.chatType ?? null,
    channel: e.channel ?? e.provider ?? e.lastChannel ?? null,
    label: e.label ?? e.subject ?? null,
    display_name: e.displayName ?? null,
    delivery: Object.keys(delivery).length > 0 ? JSON.stringify(delivery) : null,
    model_override: e.modelOverride ?? null,
    provider_override: e.providerOverride ?? null,
    auth_profile_override: e.authProfileOverride ?? null,
    toggles: JSON.stringify(pick(e, TOGGLE_FIELDS)),
    input_tokens: tokens(e.inputTokens),
    output_tokens: tokens(e.outputTokens),
    total_tokens: tokens(e.totalTokens),
    context_tokens: tokens(e.contextTokens),
    total_tokens_fresh: e.totalTokensFresh ?? false,
    compaction_count: tokens(e.compactionCount),
    memory_flush_at: e.memoryFlushAt ?? null,
    memory_flush_compaction_count: e.memoryFlushCompactionCount ?? null,
  };
}
