/**
 * Reads a streamed chat completion's body (SSE) into one completion, reporting each chunk's events,
 * and tells the ways a stream can end short apart: no data at all (where a server hides an
 * overflow), `[DONE]` without a finish reason (a reply the server interrupted), or a cut body.
 */
import { classifyHttpFailure, ModelTruncatedResponseError, ModelUnexpectedError } from './errors';
import type { ModelStreamEvent } from './model-client';
import type { ChatCompletion } from './openai-compatible-convert';
import { ChatStreamAccumulator, parseChatStreamData } from './openai-sse';
import { SseDecoder } from './sse-decoder';

/**
 * A `200` stream with no data at all. llama-cpp-python answers a streamed prompt longer than its
 * window so (its log says why, the body does not); the client asks once more without streaming.
 */
export class EmptyStreamError extends ModelTruncatedResponseError {
  constructor() {
    super({ providerMessage: 'the stream ended without sending any data' });
  }
}

/**
 * Folds an SSE body into a completion, reporting each chunk's events. Complete once a
 * `finish_reason` came, at `[DONE]` or at the end of the body (some servers send no `[DONE]`);
 * anything less is a cut-off reply: a server that interrupts a reply for another request still
 * ends it with `[DONE]`. A body without any data is an `EmptyStreamError`.
 */
export async function readChatStream(
  chunks: AsyncIterable<string>,
  model: string,
  report: (event: ModelStreamEvent, soFar: string) => void,
  authFix: string,
): Promise<ChatCompletion> {
  const decoder = new SseDecoder();
  const reply = new ChatStreamAccumulator();
  let messages = 0;
  const take = (data: string): boolean => {
    messages += 1;
    const read = parseChatStreamData(data);
    if (read.kind === 'done') return true;
    if (read.kind === 'invalid') throw new ModelUnexpectedError({ providerMessage: read.why });
    if (read.kind === 'error') {
      throw classifyHttpFailure({
        status: undefined,
        errorType: read.error.type,
        errorCode: read.error.code,
        providerMessage: read.error.message,
        authFix,
      });
    }
    for (const event of reply.add(read.chunk)) report(event, reply.text);
    return false;
  };
  let done = false;
  for await (const text of chunks) {
    for (const message of decoder.push(text)) done ||= take(message.data);
    if (done) break;
  }
  if (!done) for (const message of decoder.end()) done ||= take(message.data);
  if (messages === 0) throw new EmptyStreamError();
  if (!reply.finished) {
    throw new ModelTruncatedResponseError({
      providerMessage: done
        ? 'the stream ended with [DONE] but no finish_reason (the server interrupted the reply)'
        : 'stream ended before its last chunk',
    });
  }
  report({ type: 'messageStop' }, reply.text);
  return reply.completion(model);
}
