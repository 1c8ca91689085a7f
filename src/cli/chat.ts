import { createInterface } from 'node:readline/promises';
import type { KeelClient } from '../client/keel-client';
import type { SessionStatus } from '../protocol';
import { contextBar, contextSplitBar } from './context-bar';
import { printStreamedReply } from './print-streamed-reply';

/**
 * The interactive chat of `keel dev` and `keel chat`: one line, one durable turn, the reply printed
 * as it streams, then the context-usage bar.
 */
export async function chat(client: KeelClient, sessionKey: string, log: (l: string) => void): Promise<void> {
  log(`chat: session ${sessionKey}. Type a message; /status shows context usage; /quit or Ctrl-D leaves.`);
  // Usage, then what it is made of (system prompt, workspace files, tools, history).
  const logStatus = (status: SessionStatus) => {
    log(contextBar(status));
    if (status.contextSplit) log(contextSplitBar(status.contextSplit, status.contextWindow));
  };
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    for (;;) {
      let line: string;
      try {
        line = (await rl.question('you › ')).trim();
      } catch {
        return; // stdin closed
      }
      if (!line) continue;
      if (line === '/quit' || line === '/exit') return;
      if (line === '/status') {
        logStatus(await client.getStatus(sessionKey));
        continue;
      }
      try {
        await printStreamedReply(client.streamMessage(sessionKey, line), log);
        logStatus(await client.getStatus(sessionKey));
      } catch (err) {
        log(`turn failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  } finally {
    rl.close();
  }
}
