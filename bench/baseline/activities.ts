import Anthropic from '@anthropic-ai/sdk';
import { Context } from '@temporalio/activity';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/store/schema';
import { createSession } from '../../src/store/sessions-repo';
import { DEFAULTS } from '../../src/config/defaults';

/** What the I/O-floor activity talks to: the store and the fake model a Keel turn uses. */
export interface TurnIoFloor {
  readonly db: Kysely<Database>;
  /** The fake Messages API's base URL. */
  readonly modelUrl: string;
}

/** The agent the I/O floor writes as (a bench removes its rows when done). */
export const FLOOR_AGENT = 'bench-floor';

/**
 * The baseline's activities. `noop` returns its input, so the measured cost is Temporal's round trip
 * (schedule, eager dispatch, complete) and not any work. `turnIo` (with a floor) does a text turn's
 * I/O and nothing else: the four round trips of the same kind Keel makes (read the session row,
 * append the user's message, read the new entries, append the reply and count it on the row) as
 * hand-written SQL, and one streamed call to the same fake model through the real SDK. Keel's
 * activity less this one is Keel's own work.
 */
export function createBaselineActivities(floor?: TurnIoFloor) {
  /** Echoes `n`; no I/O. */
  async function noop(n: number): Promise<number> {
    return n;
  }

  const sdk = floor ? new Anthropic({ apiKey: 'bench-floor', baseURL: floor.modelUrl, maxRetries: 0 }) : undefined;
  // One session per calling workflow, as each Keel session has its own rows: concurrent floor turns
  // never wait on one another's row lock, which Keel's sessions never do either.
  const sessions = new Map<string, { ready: Promise<void>; lastSeq: number }>();

  /** A text turn's I/O: four statements and one streamed model call. */
  async function turnIo(n: number): Promise<number> {
    if (!floor || !sdk) throw new Error('turnIo needs a floor (the store and the fake model)');
    const { db } = floor;
    const now = new Date();
    const workflowId = Context.current().info.workflowExecution?.workflowId ?? 'standalone';
    const sessionKey = `agent:${FLOOR_AGENT}:${workflowId}`;
    const sessionId = `bench-floor-${workflowId}`;
    let session = sessions.get(sessionKey);
    if (!session) {
      session = {
        ready: createSession(db, { agentId: FLOOR_AGENT, sessionKey, newSessionId: sessionId, now }),
        lastSeq: 0,
      };
      sessions.set(sessionKey, session);
    }
    await session.ready;
    await sql`select * from sessions where agent_id = ${FLOOR_AGENT} and session_key = ${sessionKey}`.execute(db);
    const user = { role: 'user', content: `Message ${n}: how is my order?` };
    await sql`insert into transcript_entries (agent_id, session_id, id, type, role, payload, byte_size, created_at)
      values (${FLOOR_AGENT}, ${sessionId}, ${`u${n}-${now.getTime()}`}, 'message', 'user', ${JSON.stringify({ message: user })}, 0, ${now})`.execute(
      db,
    );
    const fresh = await sql<{ seq: string; payload: unknown }>`select seq, payload from transcript_entries
      where agent_id = ${FLOOR_AGENT} and session_id = ${sessionId} and seq > ${session.lastSeq} order by seq`.execute(
      db,
    );
    session.lastSeq = Number(fresh.rows.at(-1)?.seq ?? session.lastSeq);
    const reply = await sdk.messages
      .stream({
        model: DEFAULTS.model,
        max_tokens: DEFAULTS.maxOutputTokens,
        messages: [{ role: 'user', content: user.content }],
      })
      .finalMessage();
    await sql`with appended as (insert into transcript_entries (agent_id, session_id, id, type, role, payload, byte_size, created_at)
      values (${FLOOR_AGENT}, ${sessionId}, ${`a${n}-${now.getTime()}`}, 'message', 'assistant', ${JSON.stringify({ message: reply })}, 0, ${now}) returning id)
      update sessions set input_tokens = input_tokens + ${reply.usage.input_tokens}, updated_at = ${now}
      where agent_id = ${FLOOR_AGENT} and session_key = ${sessionKey} and exists (select 1 from appended) returning *`.execute(
      db,
    );
    return n;
  }
  return { noop, turnIo };
}
