import type { KeelConfig } from '../config/keel-config';
import { UsageError } from '../config/usage-error';
import { runningStack } from '../embedded/stack-state';
import { temporalConnectionOptions, type TemporalConnectionOptions } from './connection-options';

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
