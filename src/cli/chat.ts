import { createInterface } from 'node:readline/promises';
import type { KeelClient } from '../client/keel-client';
import type { SessionStatus } from '../protocol';
import { contextBar, contextSplitBar } from './context-bar';
import { printStreamedReply } from './print-streamed-reply';

/**
 * The interactive chat of `keel dev` and `keel chat`: one line, one durable turn, the reply printed
 * as it streams, then the context-usage bar. Lines that arrive faster than turns (a pipe, a pasted
 * block) wait their turn in order; at the end of input the last reply is awaited before returning.
 */
export async function chat(client: KeelClient, sessionKey: string, log: (l: string) => void): Promise<void> {
  log(`chat: session ${sessionKey}. Type a message; /status shows context usage; /quit or Ctrl-D leaves.`);
  // Usage, then what it is made of (system prompt, workspace files, tools, history).
  const logStatus = (status: SessionStatus) => {
    log(contextBar(status));
    if (status.contextSplit) log(contextSplitBar(status.contextSplit, status.contextWindow));
  };
  const rl = createInterface({ input: process.stdin, output: process.stdout, prompt: 'you › ' });
  // Ctrl-C leaves like Ctrl-D, so the stack behind the chat stops cleanly.
  rl.on('SIGINT', () => rl.close());
  rl.prompt();
  try {
    // The iterator buffers lines read while a turn runs; it ends once input has ended and all are taken.
    for await (const raw of rl) {
      const line = raw.trim();
      if (!line) {
        rl.prompt();
        continue;
      }
      if (line === '/quit' || line === '/exit') return;
      if (line === '/status') {
        logStatus(await client.getStatus(sessionKey));
        rl.prompt();
        continue;
      }
      try {
        await printStreamedReply(client.streamMessage(sessionKey, line), log);
        logStatus(await client.getStatus(sessionKey));
      } catch (err) {
        log(`turn failed: ${err instanceof Error ? err.message : String(err)}`);
      }
      rl.prompt();
    }
  } finally {
    rl.close();
  }
}
