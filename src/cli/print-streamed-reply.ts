import type { ReplyStreamItem } from '../client/keel-client';
import type { TurnToolCall } from '../protocol';

/** Where a reply is printed: stdout, or a gate in front of it. */
export interface TextOut {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

/**
 * Prints a reply as it streams: each model call's text on its own line, a retried call started
 * again (the terminal cannot take back what it printed, so the retry is said on stderr). When the
 * stream missed something, the durable reply is printed whole at the end, then the turn's tool
 * calls, one dim line each (the turn's result carries them, so they come once the turn is done).
 */
export async function printStreamedReply(items: AsyncIterable<ReplyStreamItem>, log: (line: string) => void, out: TextOut = process.stdout): Promise<void> {
  let call = -1;
  let callText = '';
  const startLine = (text: string) => {
    if (call >= 0) out.write('\n');
    out.write(`keel › ${text}`);
  };
  for await (const item of items) {
    if (item.type === 'text') {
      if (item.call !== call) {
        startLine('');
        call = item.call;
        callText = '';
      }
      out.write(item.delta);
      callText += item.delta;
    } else if (item.type === 'restart') {
      log('(the model call was retried; its reply starts again)');
      startLine('');
      callText = '';
    } else {
      const { result } = item;
      if (result.silent) {
        if (call < 0) out.write('keel › (no reply)');
      } else if (callText !== result.reply) {
        startLine(result.reply);
      }
      out.write('\n');
      for (const call of result.toolCalls ?? []) out.write(`${toolCallLine(call, out.isTTY === true)}\n`);
    }
  }
}

/** One tool call as the chat shows it: `  ⚙ read_file ok` (dim on a terminal). */
function toolCallLine(call: TurnToolCall, dim: boolean): string {
  const line = `  ⚙ ${call.name} ${call.isError ? 'error' : 'ok'}`;
  return dim ? `\x1b[2m${line}\x1b[22m` : line;
}
