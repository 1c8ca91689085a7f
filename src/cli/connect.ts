import type { KeelConfig } from '../config/keel-config';
import type { KeelClient } from '../client/keel-client';
import { keelClientForConfig } from '../client/keel-client-for-config';
import { PgReplyStreamSubscriber } from '../streaming/pg-reply-subscriber';
import { connectTemporal } from '../runtime/reach';
import { temporalConnectionFor } from '../temporal/connection-for-config';

// Declared where code a client loads can throw it; re-exported for the commands.
export { UsageError } from '../config/usage-error';

/**
 * A client for commands that talk to Temporal (see temporalConnectionFor).
 * With `stream`, replies stream from the workers' PostgreSQL (DATABASE_URL) when one is set.
 */
export async function connectClient(
  config: KeelConfig,
  opts: { stream?: boolean; log?: (line: string) => void } = {},
): Promise<{ client: KeelClient; close(): Promise<void> }> {
  const connection = await connectTemporal(temporalConnectionFor(config));
  const stream =
    opts.stream && config.databaseUrl
      ? new PgReplyStreamSubscriber({ connectionString: config.databaseUrl, ...(opts.log ? { log: opts.log } : {}) })
      : undefined;
  const client = keelClientForConfig(config, connection, {
    ...(stream ? { stream } : {}),
    ...(opts.log ? { warn: opts.log } : {}),
  });
  return {
    client,
    close: async () => {
      await stream?.close();
      await connection.close();
    },
  };
}
