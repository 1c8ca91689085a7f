import { Context } from '@temporalio/activity';
import { DEFAULTS } from '../../src/config/defaults';
import type { ModelResponse } from '../../src/model/model-client';
import { isToolCallBlock } from '../../src/context/types';
import type { ReceivedReplies } from './received-replies';
import { holdInHeartbeat } from './held-details';

/**
 * A model reply received but not stored yet, kept in the activity's heartbeat details. When a later
 * step fails (the database is away), the retried activity stores this reply instead of calling the
 * model again: a reply is paid for once. Only a call in flight when its worker dies is repeated.
 */
interface HeldReply {
  /** The assistant entry the reply is for: a held reply never answers another call. */
  readonly entryId: string;
  readonly reply: ModelResponse;
}

/** What holding a reply needs of the activity's context (a test passes its own). */
type HoldingContext = Pick<Context, 'heartbeat' | 'log'> & { readonly info: Pick<Context['info'], 'heartbeatDetails'> };

/**
 * The reply an earlier attempt of this activity received for `entryId`, if it held one. Found, it is
 * recorded again at once, so an attempt that fails before storing it leaves it for the next.
 */
function takeHeldReply(entryId: string, ctx: HoldingContext): ModelResponse | undefined {
  const held = ctx.info.heartbeatDetails as Partial<HeldReply> | undefined;
  if (!held || held.entryId !== entryId || !held.reply || !Array.isArray(held.reply.content)) return undefined;
  holdInHeartbeat(ctx, held);
  return held.reply;
}

/**
 * Holds `reply` in the heartbeat details until it is stored (a failure flushes them to Temporal
 * before the retry). Heartbeat details are Temporal payloads, sealed by the payload codec when
 * encryption is on. Not held (the worker's memo of received replies still has them for a retry on
 * the same worker):
 * - a reply over `DEFAULTS.maxHeldReplyBytes` (Temporal refuses large heartbeats);
 * - tool calls when payloads are not encrypted: their raw arguments (which may hold secrets) stay
 *   out of Temporal, as the stored entry keeps them out of the transcript.
 */
function holdReply(entryId: string, reply: ModelResponse, payloadsEncrypted: boolean, ctx: HoldingContext): boolean {
  if (!payloadsEncrypted && reply.content.some((b) => isToolCallBlock(b))) return false;
  const held: HeldReply = { entryId, reply };
  const bytes = Buffer.byteLength(JSON.stringify(held));
  if (bytes > DEFAULTS.maxHeldReplyBytes) {
    ctx.log.warn('model reply too large to hold in heartbeat details; a failed write will call the model again', {
      bytes,
      limit: DEFAULTS.maxHeldReplyBytes,
    });
    return false;
  }
  holdInHeartbeat(ctx, held);
  return true;
}

/** Where a turn's received reply waits until stored: this worker's memo, and its heartbeat details where allowed. */
export interface TurnReplyHold {
  /** The reply an earlier attempt received for `entryId` (its heartbeat details first, then this worker's memo). */
  take(entryId: string): ModelResponse | undefined;
  /** Keeps `reply` until `release`: always in the memo, in the heartbeat details as `holdReply` allows. */
  hold(entryId: string, reply: ModelResponse): void;
  /** The reply is stored: nothing more to keep. */
  release(entryId: string): void;
}

/**
 * A turn's reply hold over `replies`. The memo covers every reply a retry on this worker needs (tool
 * calls included, whatever the codec); the heartbeat details carry the replies they may to a retry
 * on another worker.
 */
export function turnReplyHold(
  replies: ReceivedReplies,
  payloadsEncrypted: boolean,
  context: () => HoldingContext = () => Context.current(),
): TurnReplyHold {
  return {
    take: (entryId) => takeHeldReply(entryId, context()) ?? replies.get(entryId, TURN_REPLY)?.reply,
    hold(entryId, reply) {
      replies.keep(entryId, TURN_REPLY, reply);
      holdReply(entryId, reply, payloadsEncrypted, context());
    },
    release: (entryId) => replies.forget(entryId),
  };
}

/** A turn's model call has one reply per assistant entry: the entry id is its scope, this its part. */
const TURN_REPLY = 'reply';
