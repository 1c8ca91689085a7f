import type { ReplyStreamItem } from '../client/keel-client';

/**
 * Prints a reply as it streams: each model call's text on its own line, a retried call started
 * again (the terminal cannot take back what it printed, so the retry is said on stderr). When the
 * stream missed something, the durable reply is printed whole at the end.
 */
export async function printStreamedReply(items: AsyncIterable<ReplyStreamItem>, log: (line: string) => void, out: NodeJS.WritableStream = process.stdout): Promise<void> {
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
    }
  }
}
