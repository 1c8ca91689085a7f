/**
 * Server-sent events framing: text in (any chunking, `\n`, `\r\n` or `\r` line ends), whole events
 * out. Comment lines (`: keep-alive`) and fields other than `event` and `data` are ignored.
 */

/** One dispatched event; `data` lines are joined with `\n`. */
export interface SseMessage {
  event: string | undefined;
  data: string;
}

export class SseDecoder {
  #buffer = '';
  #event: string | undefined;
  #data: string[] = [];

  /** Feeds decoded text; returns the events it completed. */
  push(text: string): SseMessage[] {
    this.#buffer += text;
    const out: SseMessage[] = [];
    // A trailing `\r` may be the first half of `\r\n`: keep it until the next chunk says.
    const lines = this.#buffer.split(/\r\n|\n|\r(?!$)/);
    this.#buffer = lines.pop() ?? '';
    for (const line of lines) this.#line(line, out);
    return out;
  }

  /** Flushes the last event when the stream ended without its blank line. */
  end(): SseMessage[] {
    const out: SseMessage[] = [];
    if (this.#buffer) this.#line(this.#buffer.replace(/\r$/, ''), out);
    this.#buffer = '';
    this.#line('', out);
    return out;
  }

  #line(line: string, out: SseMessage[]): void {
    if (line === '') {
      if (this.#data.length > 0) out.push({ event: this.#event, data: this.#data.join('\n') });
      this.#event = undefined;
      this.#data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'data') this.#data.push(value);
    else if (field === 'event') this.#event = value;
  }
}
