/**
 * The recorded conversation a replay plays back: the message entries of a stored session (read
 * only, never written) or of an OpenClaw/Pi JSONL transcript (parsed and repaired like an import,
 * without importing it). Compactions and memory-flush records of the original run are left out:
 * each replayed policy makes its own.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema';
import { decodeEntryRows } from '../store/entry-row';
import { getSession } from '../store/sessions-repo';
import { MESSAGE_TYPES } from '../store/entries-repo';
import type { AgentMessage, TranscriptEntry } from '../context/types';
import type { PlanEntry } from '../compaction/types';
import { MAX_IMPORT_LINE_BYTES, readJsonlLines } from '../transfer/jsonl-lines';
import { LineRepairer } from '../transfer/line-repairer';

/** A recorded message; `context` marks one that reached the model without starting a turn (a custom message). */
export interface ReplayEntry extends PlanEntry {
  readonly context?: true;
}

/** A recorded conversation: its message entries in order, and where they came from. */
export interface ReplayTranscript {
  /** `agent:main:main (session 4f…)` or the file path. */
  readonly source: string;
  readonly sessionKey?: string;
  readonly entries: readonly ReplayEntry[];
  /** JSONL lines the parser could not use (with their reasons); none for a stored session. */
  readonly droppedLines: number;
}

/** The session key names no stored session of the agent. */
export class ReplaySourceError extends Error {
  override readonly name = 'ReplaySourceError';
}

/** The stored session's current transcript (its latest session id), read with SELECTs only. */
export async function storedTranscript(
  db: Kysely<Database>,
  agentId: string,
  sessionKey: string,
): Promise<ReplayTranscript> {
  const session = await getSession(db, agentId, sessionKey);
  if (!session)
    throw new ReplaySourceError(
      `agent ${agentId} has no session ${sessionKey}; check the key (keel sessions lists them) or pass --agent`,
    );
  const rows = await db
    .selectFrom('transcript_entries')
    .select(['id', 'type', 'payload'])
    .where('agent_id', '=', agentId)
    .where('session_id', '=', session.session_id)
    .where('type', 'in', MESSAGE_TYPES)
    .orderBy('seq', 'asc')
    .execute();
  const entries: ReplayEntry[] = [];
  for (const row of decodeEntryRows(rows)) {
    const entry = toReplayEntry(row.payload);
    if (entry) entries.push({ ...entry, id: row.id });
  }
  return { source: `${sessionKey} (session ${session.session_id})`, sessionKey, entries, droppedLines: 0 };
}

/** A JSONL transcript file, repaired line by line as `keel import` would (nothing is stored). */
export async function fileTranscript(path: string): Promise<ReplayTranscript> {
  const repairer = new LineRepairer(MAX_IMPORT_LINE_BYTES);
  const entries: ReplayEntry[] = [];
  let droppedLines = 0;
  for await (const line of readJsonlLines(path)) {
    const outcome = repairer.accept(line);
    if (outcome.kind === 'dropped') droppedLines++;
    if (outcome.kind === 'fatal') throw new ReplaySourceError(`${path}:${line.lineNumber}: ${outcome.reason}`);
    if (outcome.kind !== 'entry') continue;
    const replayed = toReplayEntry(outcome.entry);
    if (replayed) entries.push(replayed);
  }
  if (!repairer.sessionHeader)
    throw new ReplaySourceError(`${path}: ${repairer.missingHeaderReason()} (is it an OpenClaw/Pi .jsonl transcript?)`);
  return { source: path, entries, droppedLines };
}

/** The message the model saw for an entry (as the active context renders it), if it carries one. */
function toReplayEntry(entry: TranscriptEntry): ReplayEntry | undefined {
  if (entry.type === 'message') return { id: entry.id, message: entry.message };
  if (entry.type === 'custom_message')
    return { id: entry.id, message: { role: 'user', content: entry.content } as AgentMessage, context: true };
  return undefined;
}
