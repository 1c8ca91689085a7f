/**
 * The JSON body of a model request, written by Keel instead of `JSON.stringify`. A request carries
 * the whole window on every call: encoded whole, then encoded again as UTF-8 by fetch, a long
 * window costs a turn real time spent encoding messages exactly as the last turn did. The
 * converters share each message's conversion across calls, frozen (`toAnthropicMessages`,
 * `toChatMessages`), so its UTF-8 JSON is computed once and kept by object; a call encodes only its
 * new (and, for Anthropic, cache-marked) messages, then copies bytes into one buffer.
 */

/** The UTF-8 JSON of each frozen message object (a frozen object cannot change, so its JSON cannot go stale). */
const encoded = new WeakMap<object, Buffer>();

function encodeMessage(message: object): Buffer {
  if (!Object.isFrozen(message)) return Buffer.from(JSON.stringify(message));
  let bytes = encoded.get(message);
  if (bytes === undefined) encoded.set(message, (bytes = Buffer.from(JSON.stringify(message))));
  return bytes;
}

const COMMA = 0x2c;

/** `JSON.stringify(body)` as UTF-8: the same keys in the same order, undefined values left out. */
export function jsonRequestBody<Body extends { readonly messages: readonly object[] }>(body: Body): Buffer {
  // The JSON around the messages, with a NUL where their array goes (JSON escapes every NUL in a value).
  const fields: string[] = [];
  for (const [key, value] of Object.entries(body) as Array<[string, unknown]>) {
    const json = key === 'messages' ? '\u0000' : JSON.stringify(value);
    if (json !== undefined) fields.push(`${JSON.stringify(key)}:${json}`);
  }
  const [before, after = ''] = `{${fields.join(',')}}`.split('\u0000') as [string, string?];
  const head = Buffer.from(`${before}[`);
  const tail = Buffer.from(`]${after}`);
  const parts = body.messages.map(encodeMessage);
  let length = head.length + tail.length + Math.max(0, parts.length - 1);
  for (const part of parts) length += part.length;
  const out = Buffer.allocUnsafe(length);
  out.set(head, 0);
  let at = head.length;
  parts.forEach((part, i) => {
    if (i > 0) out[at++] = COMMA;
    out.set(part, at);
    at += part.length;
  });
  out.set(tail, at);
  return out;
}
