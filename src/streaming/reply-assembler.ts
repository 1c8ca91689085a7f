import type { ReplyChunk, ToolNotice } from './reply-channel';

/** What a client sees of a streaming reply. `call` counts the turn's model calls from 0. */
export type ReplyStreamEvent =
  /** New reply text; `soFar` is all text the turn has streamed that still stands. */
  | { readonly type: 'text'; readonly delta: string; readonly soFar: string; readonly call: number }
  /** The model call was retried: what was shown of it is void; `soFar` is what still stands. */
  | { readonly type: 'restart'; readonly soFar: string; readonly call: number }
  /** A tool call of the turn has run (`id`: the model's tool call id), with whether it answered with an error and why. */
  | {
      readonly type: 'tool';
      readonly id: string;
      readonly name: string;
      readonly isError: boolean;
      readonly error?: string | undefined;
    };

interface CallStream {
  readonly id: string;
  readonly attempt: number;
  nextSeq: number;
  text: string;
  ended: boolean;
  readonly early: Map<number, ReplyChunk>;
}

/**
 * Turns the chunks of one request's channel into the reply as it grows: in sequence order, each
 * duplicate dropped, a higher attempt of the current model call restarting it, and anything from a
 * model call the turn has moved past (a dead attempt still sending) ignored.
 */
export class ReplyAssembler {
  private readonly seen = new Set<string>();
  private readonly toolsSeen = new Set<string>();
  private earlier = '';
  private calls = -1;
  private current: CallStream | undefined;

  constructor(private readonly emit: (event: ReplyStreamEvent) => void) {}

  accept(chunk: ReplyChunk): void {
    let stream = this.current;
    if (stream === undefined || chunk.call !== stream.id) {
      if (this.seen.has(chunk.call)) return;
      this.seen.add(chunk.call);
      this.earlier += stream?.text ?? '';
      this.calls++;
      stream = this.start(chunk);
    } else if (chunk.attempt < stream.attempt) {
      return;
    } else if (chunk.attempt > stream.attempt) {
      const shown = stream.text !== '';
      stream = this.start(chunk);
      if (shown) this.emit({ type: 'restart', soFar: this.earlier, call: this.calls });
    }
    if (chunk.seq < stream.nextSeq) return;
    stream.early.set(chunk.seq, chunk);
    for (let next = stream.early.get(stream.nextSeq); next; next = stream.early.get(stream.nextSeq)) {
      stream.early.delete(stream.nextSeq);
      stream.nextSeq++;
      if (next.text !== '') {
        stream.text += next.text;
        this.emit({ type: 'text', delta: next.text, soFar: this.earlier + stream.text, call: this.calls });
      }
      if (next.end) stream.ended = true;
    }
  }

  /** A tool call has run: said once per call, whatever its activity's retries sent. */
  acceptTool(notice: ToolNotice): void {
    if (this.toolsSeen.has(notice.tool.id)) return;
    this.toolsSeen.add(notice.tool.id);
    this.emit({ type: 'tool', ...notice.tool });
  }

  /** True once the model call `id` has delivered its last chunk. */
  ended(id: string): boolean {
    return this.current?.id === id && this.current.ended;
  }

  private start(chunk: ReplyChunk): CallStream {
    this.current = { id: chunk.call, attempt: chunk.attempt, nextSeq: 0, text: '', ended: false, early: new Map() };
    return this.current;
  }
}
