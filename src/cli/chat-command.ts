import { loadKeelSettings } from '../config/agent-config';
import { runningStack } from '../embedded/stack-state';
import { connectClient } from './connect';
import { chat } from './chat';

/**
 * `keel chat [KEY]`: the interactive chat against running workers — TEMPORAL_ADDRESS, else the
 * `keel dev` running under the same KEEL_HOME. Replies stream from the workers' PostgreSQL
 * (DATABASE_URL); through an embedded stack they arrive whole (its NOTIFY reaches only its own process).
 */
export async function chatCommand(sessionKey: string): Promise<number> {
  const config = loadKeelSettings().defaults;
  const log = (line: string) => process.stderr.write(`${line}\n`);
  if (!config.databaseUrl) {
    const stack = config.temporalAddress ? undefined : runningStack(config.home);
    log(
      stack
        ? `chatting with the embedded stack of process ${stack.pid}; replies arrive whole (it streams only to its own chat)`
        : "replies arrive whole: set DATABASE_URL to the workers' PostgreSQL to see them stream",
    );
  }
  const { client, close } = await connectClient(config, { stream: true, log });
  try {
    await chat(client, sessionKey, log);
  } finally {
    await close();
  }
  return 0;
}
