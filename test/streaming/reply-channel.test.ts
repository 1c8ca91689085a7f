import {
  MAX_CHUNK_TEXT_BYTES,
  parseReplyChunk,
  replyChannel,
  splitForPayload,
} from '../../src/streaming/reply-channel';

describe('replyChannel', () => {
  it('is a lower-case identifier within PostgreSQL’s 63 bytes, whatever the key, and differs per request', () => {
    const a = replyChannel({
      agentId: 'main',
      sessionKey: 'agent:main:telegram:group:"weird" key ✨',
      requestId: 'r1',
    });
    const b = replyChannel({
      agentId: 'main',
      sessionKey: 'agent:main:telegram:group:"weird" key ✨',
      requestId: 'r2',
    });
    expect(a).toMatch(/^[a-z_][a-z0-9_]{0,62}$/);
    expect(a).not.toBe(b);
  });
});

describe('splitForPayload', () => {
  it('returns short text as is', () => {
    expect(splitForPayload('hello')).toEqual(['hello']);
  });

  it('splits long text into pieces whose JSON stays within the limit, never inside a code point', () => {
    const text = `${'é'.repeat(5000)}${'🙂'.repeat(3000)}${'\u0000'.repeat(2000)}plain`;
    const pieces = splitForPayload(text);
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join('')).toBe(text);
    for (const piece of pieces) {
      expect(Buffer.byteLength(JSON.stringify(piece)) - 2).toBeLessThanOrEqual(MAX_CHUNK_TEXT_BYTES);
      // A code point cut in two would leave a lone surrogate at an edge.
      expect(piece).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
    }
  });
});

describe('parseReplyChunk', () => {
  it('reads a chunk and refuses anything else', () => {
    expect(parseReplyChunk('{"call":"c","attempt":1,"seq":0,"text":"hi"}')).toEqual({
      call: 'c',
      attempt: 1,
      seq: 0,
      text: 'hi',
    });
    expect(parseReplyChunk('not json')).toBeUndefined();
    expect(parseReplyChunk('{"call":"c"}')).toBeUndefined();
    expect(parseReplyChunk(undefined)).toBeUndefined();
  });
});
