import type { KeelConfig } from '../config/keel-config';
import type { KeelClient } from '../client/keel-client';
import { keelClientForConfig } from '../client/keel-client-for-config';
import { PgReplyStreamSubscriber } from '../streaming/reply-subscriber';
import { runningStack } from '../embedded/stack-state';
import { connectTemporal } from '../runtime/reach';
import { temporalConnectionOptions, type TemporalConnectionOptions } from '../temporal/connection-options';

/**
 * The Temporal frontend commands talk to: TEMPORAL_ADDRESS, else the embedded stack running under
 * KEEL_HOME (`keel dev` in another terminal).
 */
export function temporalAddressFor(config: Pick<KeelConfig, 'temporalAddress' | 'home'>): string {
  const address = config.temporalAddress ?? runningStack(config.home)?.temporalAddress;
  if (!address) {
    throw new UsageError(
      'this command talks to running workers: start `keel dev` (same KEEL_HOME) or set TEMPORAL_ADDRESS to the Temporal frontend they use (host:7233)',
    );
  }
  return address;
}

/**
 * How this process connects to Temporal: the address (see temporalAddressFor) with the namespace's
 * TLS, client certificate and API key from the configuration. Every worker, client and command
 * connects with these; the embedded stack's own dev server is plain.
 */
export function temporalConnectionFor(config: KeelConfig): TemporalConnectionOptions {
  const address = temporalAddressFor(config);
  // The running `keel dev` stack's dev server speaks plain gRPC, whatever the config says of a cluster.
  return config.temporalAddress ? temporalConnectionOptions(config, address) : { address };
}

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

/** Bad command-line usage: exit code 2, the message says what to type instead. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
