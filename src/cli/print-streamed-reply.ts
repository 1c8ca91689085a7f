import type { ReplyStreamItem } from '../client/keel-client';
import type { TurnToolCall } from '../protocol';
import { describeStopReason } from '../turn/run-budget';

/** Where a reply is printed: stdout, or a gate in front of it. */
export interface TextOut {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

/**
 * Prints a reply as it streams: each model call's text on its own line, a retried call started
 * again (the terminal cannot take back what it printed, so the retry is said on stderr), and each
 * tool call as one dim line when it has run. When the stream missed something, the durable reply is
 * printed whole at the end, with the turn's tool calls the stream did not show.
 */
export async function printStreamedReply(
  items: AsyncIterable<ReplyStreamItem>,
  log: (line: string) => void,
  out: TextOut = process.stdout,
): Promise<void> {
  let call = -1;
  let callText = '';
  let lineOpen = false;
  const shownTools = new Set<string>();
  const endLine = () => {
    if (lineOpen) out.write('\n');
    lineOpen = false;
  };
  const startLine = (text: string) => {
    endLine();
    out.write(`keel › ${text}`);
    lineOpen = true;
  };
  const toolLine = (tool: Omit<TurnToolCall, 'error'> & { readonly error?: string | undefined }) => {
    endLine();
    out.write(`${toolCallLine(tool, out.isTTY === true)}\n`);
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
    } else if (item.type === 'tool') {
      shownTools.add(item.id);
      toolLine(item);
    } else {
      const { result } = item;
      if (result.silent) {
        if (call < 0) startLine('(no reply)');
      } else if (callText !== result.reply) {
        startLine(result.reply);
      }
      endLine();
      // Calls the stream did not show (no stream, a spawn the workflow ran itself); results recorded
      // before calls carried their id are shown whole unless the stream showed some.
      for (const tool of result.toolCalls ?? []) {
        if (tool.id !== undefined ? !shownTools.has(tool.id) : shownTools.size === 0) toolLine(tool);
      }
      // A run cut at its budget says so, with what continues it.
      if (result.stopReason) log(`(the run ${describeStopReason(result.stopReason)})`);
    }
  }
}

/** One tool call as the chat shows it: `  ⚙ read_file ok`, `  ⚙ read_file error: no such file` (dim on a terminal). */
function toolCallLine(
  call: Pick<TurnToolCall, 'name' | 'isError'> & { readonly error?: string | undefined },
  dim: boolean,
): string {
  const line = `  ⚙ ${call.name} ${call.isError ? `error${call.error ? `: ${call.error}` : ''}` : 'ok'}`;
  return dim ? `\x1b[2m${line}\x1b[22m` : line;
}
