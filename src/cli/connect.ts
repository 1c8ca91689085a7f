import { Connection } from '@temporalio/client';
import type { KeelConfig } from '../config/keel-config';
import { KeelClient } from '../client/keel-client';

/** A client for commands that talk to Temporal; TEMPORAL_ADDRESS must name the cluster the workers use. */
export async function connectClient(config: KeelConfig): Promise<{ client: KeelClient; close(): Promise<void> }> {
  if (!config.temporalAddress) {
    throw new UsageError('this command talks to running workers: set TEMPORAL_ADDRESS to the Temporal frontend they use (host:7233)');
  }
  const connection = await Connection.connect({ address: config.temporalAddress });
  const client = new KeelClient({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.taskQueue,
    contextWindowTokens: config.contextWindowTokens,
  });
  return { client, close: () => connection.close() };
}

/** Bad command-line usage: exit code 2, the message says what to type instead. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** The command named a session that does not exist: exit code 1, nothing was created. */
export class UnknownSessionError extends Error {
  override readonly name = 'UnknownSessionError';
  constructor(readonly sessionKey: string, message: string) {
    super(message);
  }
}
