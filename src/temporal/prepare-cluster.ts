import { Client, Connection } from '@temporalio/client';
import type { KeelConfig } from '../config/keel-config';
import type { TemporalConnectionOptions } from './connection-options';
import { ensureSearchAttributes } from './ensure-search-attributes';
import { ensureMaintenanceSchedule } from './maintenance-schedule';

/**
 * What a worker makes sure of before polling, idempotently (many workers start at once): Keel's
 * search attributes exist and the maintenance Schedule exists.
 */
export async function prepareCluster(
  config: KeelConfig,
  temporal: TemporalConnectionOptions,
  log: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
): Promise<void> {
  const connection = await Connection.connect(temporal);
  try {
    const added = await ensureSearchAttributes(connection, config.temporalNamespace);
    if (added.length) log(`temporal: registered search attributes ${added.join(', ')}`);
    // No payload codec here, on purpose: the Schedule's only argument is `{ mode }`, and a plaintext
    // argument never pins an old encryption key (workers decode unencrypted payloads as they are).
    const client = new Client({ connection, namespace: config.temporalNamespace });
    const schedule = await ensureMaintenanceSchedule(client, {
      taskQueue: config.taskQueue,
      mode: config.maintenanceMode,
    });
    if (schedule !== 'unchanged')
      log(`temporal: keel-maintenance schedule ${schedule} (mode ${config.maintenanceMode})`);
  } finally {
    await connection.close();
  }
}
