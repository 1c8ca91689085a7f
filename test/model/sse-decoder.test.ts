import { SseDecoder } from '../../src/model/sse-decoder';

/** Feeds `text` in pieces of `size` characters and collects every event. */
function decode(text: string, size: number): Array<{ event: string | undefined; data: string }> {
  const decoder = new SseDecoder();
  const out = [];
  for (let i = 0; i < text.length; i += size) out.push(...decoder.push(text.slice(i, i + size)));
  out.push(...decoder.end());
  return out;
}

describe('SseDecoder', () => {
  const wire =
    ': keep-alive\r\n\r\nevent: error\r\ndata: {"a":1}\r\n\r\ndata: line one\ndata:line two\n\ndata: [DONE]\r\rdata: last';
  const expected = [
    { event: 'error', data: '{"a":1}' },
    { event: undefined, data: 'line one\nline two' },
    { event: undefined, data: '[DONE]' },
    { event: undefined, data: 'last' },
  ];

  it.each([1, 2, 3, 7, 1000])('gives the same events however the text is chunked (%i characters at a time)', (size) => {
    expect(decode(wire, size)).toEqual(expected);
  });

  it('dispatches nothing for comments and blank lines alone', () => {
    expect(decode(': ping\n\n\n\n', 4)).toEqual([]);
  });
});
