/**
 * The wire of reply streaming: a PostgreSQL NOTIFY channel per client request, and the chunks sent
 * on it. Tokens travel here, never through Temporal history; the durable turn still returns the reply.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';

/**
 * The channel a request's reply streams on. Worker and client both compute it from ids they know;
 * hashed, so any session key and request id make a valid identifier within PostgreSQL's 63 bytes.
 */
export function replyChannel(ids: { agentId: string; sessionKey: string; requestId: string }): string {
  const digest = createHash('sha256')
    .update(`${ids.agentId}\u0000${ids.sessionKey}\u0000${ids.requestId}`)
    .digest('hex');
  return `keel_reply_${digest.slice(0, 40)}`;
}

/**
 * One NOTIFY payload. A model call (`call`: the assistant entry it writes) streams per attempt;
 * `seq` numbers an attempt's chunks from 0 (chunk 0 announces the attempt, so a retry is seen
 * even before its first text); `end` marks its last chunk.
 */
export const replyChunkSchema = z.object({
  call: z.string(),
  attempt: z.number().int().positive(),
  seq: z.number().int().nonnegative(),
  text: z.string(),
  end: z.boolean().optional(),
});
export type ReplyChunk = z.infer<typeof replyChunkSchema>;

/**
 * A tool call of the turn that has just run, on the same channel as the reply's chunks: the chat
 * shows it as it happens. `id` is the model's tool call id (a client shows each call once).
 */
export const toolNoticeSchema = z.object({
  tool: z.object({
    id: z.string(),
    name: z.string(),
    isError: z.boolean(),
    /** An error result's first line (at most {@link MAX_TOOL_ERROR_CHARS}): the chat shows why the call failed. */
    error: z.string().optional(),
  }),
});
export type ToolNotice = z.infer<typeof toolNoticeSchema>;

/** An error reason the chat shows on the tool's line: one line, well inside a NOTIFY payload. */
export const MAX_TOOL_ERROR_CHARS = 200;

/** PostgreSQL refuses NOTIFY payloads of 8000 bytes or more; this leaves room for the chunk's other fields. */
export const MAX_CHUNK_TEXT_BYTES = 6000;

/**
 * Splits text into pieces whose JSON encoding stays within `maxBytes`, never inside a code point
 * (escapes such as `\u0000` count at their encoded size).
 */
export function splitForPayload(text: string, maxBytes = MAX_CHUNK_TEXT_BYTES): string[] {
  if (encodedBytes(text) <= maxBytes) return [text];
  const pieces: string[] = [];
  let piece = '';
  let bytes = 0;
  for (const codePoint of text) {
    const size = encodedBytes(codePoint);
    if (bytes + size > maxBytes && piece !== '') {
      pieces.push(piece);
      piece = '';
      bytes = 0;
    }
    piece += codePoint;
    bytes += size;
  }
  if (piece !== '') pieces.push(piece);
  return pieces;
}

function encodedBytes(text: string): number {
  return Buffer.byteLength(JSON.stringify(text)) - 2;
}

/** Parses a payload from the channel; undefined for anything that is not a chunk. */
export function parseReplyChunk(payload: string | undefined): ReplyChunk | undefined {
  return parseAs(replyChunkSchema, payload);
}

/** Parses a payload from the channel; undefined for anything that is not a tool notice. */
export function parseToolNotice(payload: string | undefined): ToolNotice | undefined {
  return parseAs(toolNoticeSchema, payload);
}

function parseAs<T>(schema: z.ZodType<T>, payload: string | undefined): T | undefined {
  if (!payload) return undefined;
  try {
    const parsed = schema.safeParse(JSON.parse(payload));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
