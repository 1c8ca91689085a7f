/**
 * The export operations: a session's transcript as OpenClaw JSONL (`keel export`), the current one or
 * an earlier session id, or every transcript the key has had (`--all`). Where the lines go is the
 * caller's: a file, stdout, a response body.
 */
import type { Writable } from 'node:stream';
import type { Kysely } from 'kysely';
import { hasEntries } from '../../store/entries-repo';
import type { Database } from '../../store/schema';
import { sessionIdsOfKey } from '../../store/session-ids-repo';
import { getSession } from '../../store/sessions-repo';
import { exportSessionJsonl, type ExportReport } from '../../transfer/export-jsonl';
import { UnknownSessionError } from '../errors';
import { shownKey } from '../shown-key';

/** Where one transcript's lines go, opened only once the session is known; `finish` ends a file. */
export interface ExportSink {
  readonly out: Writable;
  /** The file written, reported beside the transcript. */
  readonly file?: string;
  finish(): Promise<void>;
}

/** One transcript of an export of every session id. */
export interface ExportedTranscript extends ExportReport {
  sessionId: string;
  startedAt: string;
  endedAt: string | null;
  current: boolean;
  /** The file written; a transcript without entries gets none. */
  file?: string;
}

/** The session row of the key, or an UnknownSessionError saying nothing was exported. */
async function sessionToExport(db: Kysely<Database>, agentId: string, sessionKey: string) {
  const session = await getSession(db, agentId, sessionKey);
  if (!session)
    throw new UnknownSessionError(
      sessionKey,
      `no session ${shownKey(sessionKey)} for agent ${agentId}; list them with \`keel sessions --agent ${agentId}\` (nothing was exported)`,
    );
  return session;
}

/** One transcript to export: the key's current one unless `sessionId` names an earlier one. */
export interface ExportInput {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId?: string | undefined;
  readonly open: () => ExportSink;
}

/** Exports one transcript of the key (`sessionId`, default its current one) to the sink `open` returns. */
export async function exportTranscript(
  deps: { readonly db: Kysely<Database> },
  input: ExportInput,
): Promise<ExportReport & { readonly sessionId: string }> {
  const { db } = deps;
  const { agentId, sessionKey } = input;
  const session = await sessionToExport(db, agentId, sessionKey);
  const sessionId = input.sessionId ?? session.session_id;
  if (sessionId !== session.session_id && !(await hasEntries(db, agentId, sessionId)))
    throw new UnknownSessionError(
      sessionKey,
      `agent ${agentId} has no transcript with session id ${sessionId}; the key's current one is ${session.session_id} (nothing was exported)`,
    );
  const sink = input.open();
  // Only the key's current transcript carries the key: importing an earlier one must not make it current.
  const keyed = sessionId === session.session_id ? { sessionKey } : {};
  const report = await exportSessionJsonl({ db, agentId, sessionId, out: sink.out, ...keyed });
  await sink.finish();
  return { ...report, sessionId };
}

/** Every transcript of the key, each to its own sink. */
export interface ExportAllInput {
  readonly agentId: string;
  readonly sessionKey: string;
  /** Checks the destination once the session is known, before anything is read (a folder that must exist). */
  readonly check?: () => void;
  readonly openFor: (sessionId: string) => ExportSink;
}

/**
 * Exports every transcript the key has had, oldest first, each to the sink `openFor` returns (called
 * once the session is known, and only for transcripts with entries).
 */
export async function exportAllTranscripts(
  deps: { readonly db: Kysely<Database> },
  input: ExportAllInput,
): Promise<{ sessionKey: string; transcripts: ExportedTranscript[] }> {
  const { db } = deps;
  const { agentId, sessionKey } = input;
  await sessionToExport(db, agentId, sessionKey);
  input.check?.();
  const transcripts: ExportedTranscript[] = [];
  for (const id of await sessionIdsOfKey(db, agentId, sessionKey)) {
    const described = {
      sessionId: id.sessionId,
      startedAt: id.startedAt.toISOString(),
      endedAt: id.endedAt?.toISOString() ?? null,
      current: id.current,
    };
    if (!(await hasEntries(db, agentId, id.sessionId))) {
      transcripts.push({ ...described, entries: 0, bytes: 0, synthesizedHeader: false });
      continue;
    }
    const sink = input.openFor(id.sessionId);
    const report = await exportSessionJsonl({
      db,
      agentId,
      sessionId: id.sessionId,
      out: sink.out,
      ...(id.current ? { sessionKey } : {}),
    });
    await sink.finish();
    transcripts.push({ ...described, ...report, ...(sink.file ? { file: sink.file } : {}) });
  }
  return { sessionKey, transcripts };
}
