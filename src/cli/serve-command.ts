import type { Logger } from 'pino';
import type { KeelClient } from '../client/keel-client';
import { createKeelLogger, loggerOptionsFromEnv } from '../observability/logger';
import { replyStreamForStore } from '../streaming/reply-stream-for-store';
import { loadKeelSettings, type KeelSettings } from '../config/agent-config';
import type { Store } from '../store/connect';
import { temporalDependency } from '../runtime/reach';
import { storeDependency } from '../store/reachable-store';
import type { ApiDeps } from '../api/api-deps';
import { checkApiBinding, serveApi, type ServedApi } from '../api/serve-api';
import { connectClient } from './connect';
import { temporalAddressFor } from '../temporal/connection-for-config';
import { openConfiguredStore } from './commands/shared';

/** The API's dependencies from a client, a store and the settings: one place for `keel serve` and `keel dev`. */
function apiDeps(
  client: KeelClient,
  store: Store,
  settings: KeelSettings,
  temporalAddress: string,
  extra: Pick<ApiDeps, 'events' | 'logger'>,
): ApiDeps {
  const token = settings.defaults.apiToken;
  return {
    client,
    db: store.db,
    settings,
    dependencies: { temporal: temporalDependency(temporalAddress), database: storeDependency(store.target) },
    ...(token ? { token } : {}),
    ...extra,
  };
}

/**
 * Serves the API on KEEL_API_HOST:KEEL_API_PORT with these parts, logging to `logger` (default: the
 * environment's KEEL_LOG_LEVEL and KEEL_LOG_PRETTY, on stdout). Its event streams listen on `store`.
 */
export async function serveApiWith(
  client: KeelClient,
  store: Store,
  settings: KeelSettings,
  temporalAddress: string,
  logger: Logger = createKeelLogger(loggerOptionsFromEnv(process.env)),
): Promise<ServedApi> {
  const events = replyStreamForStore(store, (line) => logger.warn(line));
  try {
    const api = await serveApi(apiDeps(client, store, settings, temporalAddress, { events, logger }), {
      host: settings.defaults.apiHost,
      port: settings.defaults.apiPort,
    });
    return {
      url: api.url,
      close: async () => {
        await api.close();
        await events.close();
      },
    };
  } catch (err) {
    await events.close();
    throw err;
  }
}

/**
 * `keel serve`: the HTTP API for running workers (TEMPORAL_ADDRESS, else the running `keel dev`)
 * until SIGINT or SIGTERM. Replies stream with DATABASE_URL (the workers' PostgreSQL); through an
 * embedded stack's PGlite they arrive whole.
 */
export async function serveCommand(log: (line: string) => void): Promise<number> {
  const settings = loadKeelSettings();
  const config = settings.defaults;
  // Refused before anything is connected.
  checkApiBinding(config.apiHost, config.apiToken);
  const temporalAddress = temporalAddressFor(config);
  const { client, close } = await connectClient(config, { stream: true, log });
  let store: Store | undefined;
  try {
    store = await openConfiguredStore();
    const api = await serveApiWith(client, store, settings, temporalAddress);
    log(
      `keel serve: HTTP API on ${api.url} (GET ${api.url}/openapi.json describes it)${config.apiToken ? '; requests need Authorization: Bearer $KEEL_API_TOKEN' : ''}`,
    );
    if (!config.databaseUrl)
      log(
        "replies arrive whole in streams: set DATABASE_URL to the workers' PostgreSQL to stream them as they are written",
      );
    await untilStopSignal();
    log('keel serve: stopping');
    await api.close();
    return 0;
  } finally {
    await store?.close();
    await close();
  }
}

function untilStopSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
