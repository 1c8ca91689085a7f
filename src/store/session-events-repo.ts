import type { TurnStopReason } from '../protocol';
import type { Kysely } from 'kysely';
import { announceRequestId } from '../protocol';
import { isSilentReply } from '../context/silent-reply';
import { isToolCallBlock, type AgentMessage, type MessageEntry, type SystemEventKind } from '../context/types';
import { decodeEntryRows } from './entry-row';
import type { Database } from './schema';
import { sessionIdsOfKey } from './session-ids-repo';

/**
 * What a session said without being asked, read back from its transcript: each report a subagent
 * announced to it (`report`, the user entry its announce claimed) and the session's answer to it
 * (`announce`, the turn's final reply), and its answer to a system event such as a cron job or a
 * hook (`system`). `seq` is the entry's: a reader resumes after it.
 */
export type SessionEvent =
  | {
      readonly kind: 'report';
      readonly seq: number;
      readonly requestId: string;
      readonly subagentId: string;
      readonly text: string;
    }
  | {
      readonly kind: 'announce';
      readonly seq: number;
      readonly requestId: string;
      readonly subagentId: string;
      /** The answer; null when it was silent (NO_REPLY). */
      readonly reply: string | null;
      /** Set when the answering run stopped at its budget (the answer is its report). */
      readonly stopReason?: TurnStopReason;
    }
  | {
      readonly kind: 'system';
      readonly seq: number;
      /** What ran the turn (`cron`, `heartbeat`, `exec_notice`, `bookkeeping`). */
      readonly event: SystemEventKind;
      /** The event's text, as the session received it. */
      readonly text: string;
      /** The answer; null when it was silent (NO_REPLY). */
      readonly reply: string | null;
      /** Set when the answering run stopped at its budget (the answer is its report). */
      readonly stopReason?: TurnStopReason;
    };

/** A system event's turn waiting for its answer. */
interface SystemTurn {
  readonly event: SystemEventKind;
  readonly text: string;
}

/** The announce a turn answers: the subagent and its request id. */
interface AnnounceTurn {
  readonly requestId: string;
  readonly subagentId: string;
}

/** The session a reader follows. */
interface SessionRef {
  readonly agentId: string;
  readonly sessionKey: string;
}

/** Entries read per query: a reader that is far behind catches up page by page. */
const PAGE = 200;

/**
 * Reads a session's unasked events after a cursor, in transcript order, each once. Every reader has
 * its own cursor: readers never take events from one another (nor from the chat, which collects the
 * same answers from the session workflow). A session writes one turn at a time, so its entries
 * commit in `seq` order and a cursor never skips one written later with a lower `seq`.
 */
export class SessionEventReader {
  /** The announce whose turn is open at the cursor (its answer not read yet). */
  private open: AnnounceTurn | undefined;
  /** The system event whose turn is open at the cursor (its answer not read yet). */
  private openSystem: SystemTurn | undefined;
  /** False until the turn open at the cursor was looked up (the first read). */
  private placed = false;

  private constructor(
    private readonly db: Kysely<Database>,
    private readonly session: SessionRef,
    /** The last entry read: events at or before it were handed out (or passed) already. */
    private cursor: number,
  ) {}

  /** A reader after entry `after`, or after the session's last entry (only what comes next) when undefined. */
  static async open(db: Kysely<Database>, session: SessionRef, after: number | undefined): Promise<SessionEventReader> {
    const start = after ?? (await lastSeq(db, session.agentId, await idsOf(db, session)));
    return new SessionEventReader(db, session, start);
  }

  /** Where the reader stands: the `seq` of the last entry it read. */
  get position(): number {
    return this.cursor;
  }

  /** The events written since the last read, oldest first. */
  async read(): Promise<SessionEvent[]> {
    const ids = await idsOf(this.db, this.session);
    const { agentId } = this.session;
    if (ids.length === 0) return [];
    // A reader placed inside an announce's turn (after its report) still owes that turn's answer.
    let from = this.cursor;
    if (!this.placed) {
      from = (await lastUserSeqAtOrBefore(this.db, agentId, ids, this.cursor)) ?? this.cursor;
      this.placed = true;
    }
    const events: SessionEvent[] = [];
    for (;;) {
      const rows = await messagesAfter(this.db, agentId, ids, from);
      const users = rows.filter((r) => r.role === 'user').map((r) => r.id);
      const announces = await announcesOf(this.db, this.session, users);
      for (const row of rows) {
        const seq = Number(row.seq);
        const event = this.step(seq, row.id, row.payload.type === 'message' ? row.payload : undefined, announces);
        if (event && seq > this.cursor) events.push(event);
      }
      if (rows.length > 0) from = Number(rows[rows.length - 1]!.seq);
      if (rows.length < PAGE) break;
    }
    this.cursor = Math.max(this.cursor, from);
    return events;
  }

  /** One entry of the transcript: a user entry opens a turn (an announce's, or not); a final reply closes it. */
  private step(
    seq: number,
    id: string,
    entry: MessageEntry | undefined,
    announces: ReadonlyMap<string, AnnounceTurn>,
  ): SessionEvent | undefined {
    const message = entry?.message;
    if (message?.role === 'user') {
      this.open = announces.get(id);
      this.openSystem = entry?.systemEvent ? { event: entry.systemEvent, text: textOf(message) } : undefined;
      return this.open ? { kind: 'report', seq, ...this.open, text: textOf(message) } : undefined;
    }
    if (message?.role !== 'assistant' || message.content.some((b) => isToolCallBlock(b))) return undefined;
    const reply = answerOf(message);
    const stopped = message.runStop ? { stopReason: message.runStop } : {};
    if (this.open) {
      const answered = this.open;
      this.open = undefined;
      return { kind: 'announce', seq, ...answered, reply, ...stopped };
    }
    if (this.openSystem) {
      const answered = this.openSystem;
      this.openSystem = undefined;
      return { kind: 'system', seq, ...answered, reply, ...stopped };
    }
    return undefined;
  }
}

/** A final reply's text, or null when the session stayed silent. */
function answerOf(message: AgentMessage): string | null {
  const reply = textOf(message);
  return isSilentReply(reply) || reply.trim() === '' ? null : reply;
}

function textOf(message: AgentMessage): string {
  if (typeof message.content === 'string') return message.content;
  return message.content
    .filter((b): b is { type: 'text'; text: string } => b.type === 'text')
    .map((b) => b.text)
    .join('');
}

/** Every session id the key has had: a rotation does not lose what was said before it. */
async function idsOf(db: Kysely<Database>, session: SessionRef): Promise<string[]> {
  return (await sessionIdsOfKey(db, session.agentId, session.sessionKey)).map((s) => s.sessionId);
}

async function lastSeq(db: Kysely<Database>, agentId: string, ids: readonly string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const row = await db
    .selectFrom('transcript_entries')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .where('agent_id', '=', agentId)
    .where('session_id', 'in', ids)
    .executeTakeFirst();
  return Number(row?.seq ?? 0);
}

async function lastUserSeqAtOrBefore(
  db: Kysely<Database>,
  agentId: string,
  ids: readonly string[],
  seq: number,
): Promise<number | undefined> {
  const row = await db
    .selectFrom('transcript_entries')
    .select('seq')
    .where('agent_id', '=', agentId)
    .where('session_id', 'in', ids)
    .where('seq', '<=', seq)
    .where('type', '=', 'message')
    .where('role', '=', 'user')
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  // Read from just before it, so the turn's report is stepped through again (and not handed out twice).
  return row ? Number(row.seq) - 1 : undefined;
}

/** User and assistant messages after `seq`, oldest first: the entries a turn opens and closes with. */
async function messagesAfter(db: Kysely<Database>, agentId: string, ids: readonly string[], seq: number) {
  const rows = await db
    .selectFrom('transcript_entries')
    .select(['seq', 'id', 'type', 'role', 'payload'])
    .where('agent_id', '=', agentId)
    .where('session_id', 'in', ids)
    .where('seq', '>', seq)
    .where('type', '=', 'message')
    .where('role', 'in', ['user', 'assistant'])
    .orderBy('seq', 'asc')
    .limit(PAGE)
    .execute();
  return decodeEntryRows(rows);
}

/** Which of these user entries an announce claimed (found through the session's subagent runs). */
async function announcesOf(
  db: Kysely<Database>,
  session: SessionRef,
  entryIds: readonly string[],
): Promise<Map<string, AnnounceTurn>> {
  if (entryIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('subagent_announces as a')
    .innerJoin('subagent_runs as r', 'r.id', 'a.subagent_id')
    .select(['a.parent_entry_id', 'a.subagent_id', 'a.announce_key'])
    .where('r.agent_id', '=', session.agentId)
    .where('r.parent_session_key', '=', session.sessionKey)
    .where('a.parent_entry_id', 'in', entryIds)
    .execute();
  return new Map(
    rows.map((r) => [
      r.parent_entry_id,
      { subagentId: r.subagent_id, requestId: announceRequestId(r.subagent_id, r.announce_key) },
    ]),
  );
}
