import { sql, type Kysely } from 'kysely';
import type { Database } from '../store/schema';
import { replyChannel, splitForPayload, type ReplyChunk, type ToolNotice } from './reply-channel';
import { SilentPrefixFilter } from './silent-prefix-filter';

/** Deltas arriving within this window go out as one NOTIFY (a token each would be a query each). */
const BATCH_MS = 25;

export interface ReplyPublisherOptions {
  readonly agentId: string;
  readonly sessionKey: string;
  /** The client request whose reply this is: the channel derives from it. */
  readonly requestId: string;
  /** The assistant entry this model call writes (the same across the activity's attempts). */
  readonly call: string;
  /** The activity attempt (1-based): a higher attempt tells the client to discard the lower one. */
  readonly attempt: number;
  /** Where a failed NOTIFY is reported (once per attempt). */
  readonly warn: (message: string, fields: Record<string, unknown>) => void;
}

/**
 * Streams one model call's text to the client over NOTIFY while the activity runs. Best effort: a
 * failed NOTIFY is logged and streaming stops for this attempt, never failing the turn. Text that
 * could still be a NO_REPLY is held back (`SilentPrefixFilter`). Chunks go out one at a time, in
 * order, so each attempt's sequence numbers arrive in commit order.
 */
export class ReplyPublisher {
  private readonly channel: string;
  private readonly filter = new SilentPrefixFilter();
  private pending = '';
  private seq = 0;
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  private failed = false;
  private stopped = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly opts: ReplyPublisherOptions,
  ) {
    this.channel = replyChannel(opts);
    // Announces the attempt: a retry clears what the client showed of the last one, text or not.
    this.send('', false);
  }

  /** A text delta from the model (never throws: it runs inside the model client's stream callback). */
  readonly push = (delta: string): void => {
    if (this.stopped) return;
    this.pending += this.filter.push(delta);
    if (this.pending !== '' && this.timer === undefined) this.timer = setTimeout(() => this.flush(false), BATCH_MS);
  };

  /** The reply is complete: sends what is left with the end mark and waits until everything was sent. */
  async finish(): Promise<void> {
    if (this.stopped) return;
    this.pending += this.filter.end();
    this.flush(true);
    this.stopped = true;
    await this.chain;
  }

  /** The call failed: nothing more is sent for this attempt (the next attempt restarts the reply). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private flush(end: boolean): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const text = this.pending;
    this.pending = '';
    const pieces = text === '' ? [] : splitForPayload(text);
    pieces.forEach((piece, i) => this.send(piece, end && i === pieces.length - 1));
    if (end && pieces.length === 0) this.send('', true);
  }

  private send(text: string, end: boolean): void {
    const chunk: ReplyChunk = {
      call: this.opts.call,
      attempt: this.opts.attempt,
      seq: this.seq++,
      text,
      ...(end ? { end } : {}),
    };
    this.chain = this.chain.then(async () => {
      if (this.failed) return;
      try {
        await sql`select pg_notify(${this.channel}, ${JSON.stringify(chunk)})`.execute(this.db);
      } catch (err) {
        this.failed = true;
        this.opts.warn('reply streaming failed; the turn goes on and its reply arrives whole', {
          sessionKey: this.opts.sessionKey,
          error: err instanceof Error ? err.message : String(err),
        });
      }
    });
  }
}

/** A publisher for a model call when the turn has a client request to stream to; undefined otherwise. */
export function openReplyStream(
  db: Kysely<Database>,
  opts: Omit<ReplyPublisherOptions, 'requestId'> & { requestId?: string },
): ReplyPublisher | undefined {
  return opts.requestId === undefined ? undefined : new ReplyPublisher(db, { ...opts, requestId: opts.requestId });
}

/**
 * Tells the client listening on the request's channel that one of its turn's tool calls has run (the
 * chat shows it while the turn goes on). Best effort, like the reply's text: a failed NOTIFY is only
 * reported, and the turn's result still lists the call.
 */
export async function publishToolNotice(
  db: Kysely<Database>,
  ids: { readonly agentId: string; readonly sessionKey: string; readonly requestId: string },
  tool: ToolNotice['tool'],
  warn: (message: string, fields: Record<string, unknown>) => void,
): Promise<void> {
  const notice: ToolNotice = { tool };
  try {
    await sql`select pg_notify(${replyChannel(ids)}, ${JSON.stringify(notice)})`.execute(db);
  } catch (err) {
    warn('tool notice failed; the turn goes on and its result lists the call', {
      sessionKey: ids.sessionKey,
      error: err instanceof Error ? err.message : String(err),
    });
  }
}
