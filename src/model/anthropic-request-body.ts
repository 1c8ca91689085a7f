/**
 * The JSON body of a streamed Messages request, written by Keel instead of the SDK. The SDK encodes
 * the whole request with `JSON.stringify` on every call, and fetch then encodes that string as UTF-8:
 * on a 2,000-message window, ~2 ms of a turn spent encoding messages exactly as last turn did. The
 * messages the converter shares across calls are frozen (`toAnthropicMessages`), so their UTF-8 JSON
 * is computed once and kept by object; a call encodes only its new and marked messages, then copies
 * bytes into one buffer.
 */

/** Request fields the SDK sends as headers, never in the body. */
const HEADER_FIELDS = new Set(['betas', 'user_profile_id', 'workspace_id']);

/** The UTF-8 JSON of each frozen message object (a frozen object cannot change, so its JSON cannot go stale). */
const encoded = new WeakMap<object, Buffer>();

function encodeMessage(message: object): Buffer {
  if (!Object.isFrozen(message)) return Buffer.from(JSON.stringify(message));
  let bytes = encoded.get(message);
  if (bytes === undefined) encoded.set(message, (bytes = Buffer.from(JSON.stringify(message))));
  return bytes;
}

const COMMA = 0x2c;

/**
 * `JSON.stringify({ ...params, stream: true })` as UTF-8, with the same keys in the same order,
 * less the fields the SDK sends as headers (`betas`). Values JSON leaves out (undefined) are left out
 * here too.
 */
export function streamedRequestBody(params: { readonly messages: readonly object[] }): Buffer {
  // The JSON around the messages, with a one-character stand-in where their array goes.
  const fields: string[] = [];
  for (const [key, value] of Object.entries({ ...params, stream: true }) as Array<[string, unknown]>) {
    if (value === undefined || HEADER_FIELDS.has(key)) continue;
    const json = key === 'messages' ? '\u0000' : JSON.stringify(value);
    if (json !== undefined) fields.push(`${JSON.stringify(key)}:${json}`);
  }
  const [before, after = ''] = `{${fields.join(',')}}`.split('\u0000') as [string, string?];
  const head = Buffer.from(`${before}[`);
  const tail = Buffer.from(`]${after}`);
  const parts = params.messages.map(encodeMessage);
  let length = head.length + tail.length + Math.max(0, parts.length - 1);
  for (const part of parts) length += part.length;
  const body = Buffer.allocUnsafe(length);
  body.set(head, 0);
  let at = head.length;
  parts.forEach((part, i) => {
    if (i > 0) body[at++] = COMMA;
    body.set(part, at);
    at += part.length;
  });
  body.set(tail, at);
  return body;
}
