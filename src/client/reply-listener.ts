import { replyChannel, parseReplyChunk, parseToolNotice } from '../streaming/reply-channel';
import { ReplyAssembler, type ReplyStreamEvent } from '../streaming/reply-assembler';
import type { ReplyStreamSubscriber } from '../streaming/reply-subscriber';

/** How long a send waits, once its outcome is in, for the last chunks still on their way. */
const SETTLE_MS = 2_000;

/** One request's reply stream, heard from before the request is admitted until its outcome. */
export interface ReplyListener {
  /** Waits (briefly, best effort) until the final model call's last chunk has arrived. */
  settle(finalCall: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Listens on the request's channel and hands its events to `onEvent`. Streaming is best effort: when
 * the subscription fails the send goes on without it (`warn` says why) and returns undefined.
 */
export async function listenForReply(
  subscriber: ReplyStreamSubscriber,
  ids: { agentId: string; sessionKey: string; requestId: string },
  onEvent: (event: ReplyStreamEvent) => void,
  warn: (line: string) => void,
): Promise<ReplyListener | undefined> {
  let wake: (() => void) | undefined;
  const assembler = new ReplyAssembler((event) => {
    try {
      onEvent(event);
    } catch (err) {
      warn(`keel: the reply stream callback threw (${err instanceof Error ? err.message : String(err)}); ignored`);
    }
  });
  let unlisten: () => Promise<void>;
  try {
    unlisten = await subscriber.listen(replyChannel(ids), (payload) => {
      const chunk = parseReplyChunk(payload);
      if (chunk) {
        assembler.accept(chunk);
        wake?.();
        return;
      }
      const notice = parseToolNotice(payload);
      if (notice) assembler.acceptTool(notice);
    });
  } catch (err) {
    warn(
      `keel: cannot listen for the streamed reply (${err instanceof Error ? err.message : String(err)}); the reply arrives whole`,
    );
    return undefined;
  }
  return {
    async settle(finalCall) {
      const deadline = Date.now() + SETTLE_MS;
      while (!assembler.ended(finalCall) && Date.now() < deadline) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, deadline - Date.now());
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      wake = undefined;
    },
    stop: () => unlisten().catch(() => undefined),
  };
}
