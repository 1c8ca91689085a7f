import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import type { KeelConfig } from '../config/keel-config';
import {
  describeTemporalConnection,
  TemporalTlsFileError,
  type TemporalConnectionOptions,
} from '../temporal/connection-options';
import type { WorkflowLookup } from '../operations/doctor/doctor';
import { temporalConnectionFor } from '../temporal/connection-for-config';

/** Doctor gives up on an unreachable cluster after this long and skips the workflow check. */
const CONNECT_TIMEOUT_MS = 3_000;

/**
 * Workflow statuses for `keel doctor`, from the cluster the workers use (TEMPORAL_ADDRESS or the
 * running `keel dev`). No address or no answer: the reason, so doctor reports the check skipped
 * instead of failing the checks that need only the database.
 */
export async function workflowLookupFor(
  config: KeelConfig,
): Promise<{ lookup: WorkflowLookup; connection: string; close(): Promise<void> } | { skipped: string }> {
  let options: TemporalConnectionOptions;
  try {
    options = temporalConnectionFor(config);
  } catch (err) {
    if (err instanceof TemporalTlsFileError) return { skipped: err.message };
    return { skipped: 'no Temporal address (set TEMPORAL_ADDRESS, or run `keel dev` with the same KEEL_HOME)' };
  }
  let connection: Connection;
  try {
    connection = await Connection.connect({ ...options, connectTimeout: CONNECT_TIMEOUT_MS });
  } catch (err) {
    return {
      skipped: `cannot reach Temporal at ${options.address} (TEMPORAL_ADDRESS): ${err instanceof Error ? err.message : String(err)}`,
    };
  }
  const client = new Client({ connection, namespace: config.temporalNamespace });
  return {
    lookup: {
      async status(workflowId) {
        try {
          return (await client.workflow.getHandle(workflowId).describe()).status.name;
        } catch (err) {
          if (err instanceof WorkflowNotFoundError) return 'NOT_FOUND';
          throw err;
        }
      },
    },
    connection: describeTemporalConnection(
      config.temporalAddress ? config : { temporalNamespace: config.temporalNamespace },
      options.address,
    ),
    close: () => connection.close(),
  };
}
