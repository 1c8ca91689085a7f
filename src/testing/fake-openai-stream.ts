/**
 * Writes a streamed chat completion for the fake server (`fake-anthropic.ts`), honouring the step's
 * `eventDelayMs`, `truncateAfterEvents` (the connection dies after that many chunks) and
 * `streamError` (an `{error}` payload after that many chunks, then the end, as OpenAI-compatible
 * servers report a failure mid-stream), and the server's quirks: no usage chunk, and a stream
 * another request interrupts ending in `[DONE]` without its finish chunk.
 */
import type { ServerResponse } from 'node:http';
import type { FakeRequestBody } from './fake-anthropic';
import { openAiSseChunks, openAiSseText, type FakeOpenAiUsage, type OpenAiSseData } from './fake-anthropic-render';
import type { FakeMessageStep } from './fake-anthropic-steps';
import type { FakeOpenAiQuirks, FakeOpenAiSlot } from './fake-openai-quirks';

export async function streamOpenAiSse(
  res: ServerResponse,
  step: FakeMessageStep,
  ids: { messageId: string; model: string },
  usage: FakeOpenAiUsage,
  body: FakeRequestBody,
  /** The server's delay, which its close() cuts short. */
  wait: (ms: number) => Promise<void>,
  isClosed: () => boolean,
  server: { quirks: FakeOpenAiQuirks; slot: FakeOpenAiSlot; onInterrupted: () => void },
): Promise<void> {
  const includeUsage =
    !server.quirks.noStreamUsage &&
    (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
  const chunks = openAiSseChunks(step, ids, usage, includeUsage);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const stream = server.slot.open();
  try {
    await writeChunks(
      res,
      step,
      chunks,
      wait,
      isClosed,
      () => server.quirks.interruptOnNewRequest === true && stream.interrupted,
      server.onInterrupted,
    );
  } finally {
    stream.close();
  }
}

async function writeChunks(
  res: ServerResponse,
  step: FakeMessageStep,
  chunks: OpenAiSseData[],
  wait: (ms: number) => Promise<void>,
  isClosed: () => boolean,
  interrupted: () => boolean,
  onInterrupted: () => void,
): Promise<void> {
  for (let sent = 0; sent < chunks.length; sent++) {
    if (interrupted()) {
      onInterrupted();
      res.end(openAiSseText('[DONE]'));
      return;
    }
    if (step.streamError && sent === step.streamError.afterEvents) {
      const { errorType, message } = step.streamError;
      res.end(openAiSseText({ error: { message, type: errorType, code: null } }));
      return;
    }
    if (step.truncateAfterEvents !== undefined && sent === step.truncateAfterEvents) {
      // Lets written bytes reach the client first, so the cut is mid-stream, not before it.
      res.write('', () => res.destroy());
      return;
    }
    if (sent > 0) await wait(step.eventDelayMs ?? 0);
    if (isClosed() || res.destroyed) return;
    res.write(openAiSseText(chunks[sent]!));
  }
  res.end();
}
