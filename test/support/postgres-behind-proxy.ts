/**
 * A store on a fresh PostgreSQL schema that the worker reaches through a cuttable TCP proxy, for the
 * tests that take the database away mid-turn.
 */
import { freshSchemaUrl } from './databases';
import { startCuttableProxy, type CuttableProxy } from './cuttable-proxy';
import { openStore, type Store } from '../../src/store/connect';

/**
 * For a suite's tests: each opens its store behind its own proxy (`open()`), and the proxy is closed
 * after the test (the test closes the store).
 */
export function cuttablePostgresPerTest(url: string): () => Promise<{ proxy: CuttableProxy; store: Store }> {
  let proxy: CuttableProxy | undefined;
  afterEach(async () => proxy?.close());
  return async () => {
    const opened = await postgresBehindCuttableProxy(url);
    proxy = opened.proxy;
    return opened;
  };
}

/** Opens a fresh schema of the server at `url` through a new proxy; the caller closes both. */
async function postgresBehindCuttableProxy(url: string): Promise<{ proxy: CuttableProxy; store: Store }> {
  const direct = new URL(await freshSchemaUrl(url));
  const proxy = await startCuttableProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
  const viaProxy = new URL(direct);
  viaProxy.hostname = proxy.host;
  viaProxy.port = String(proxy.port);
  const store = await openStore({ kind: 'postgres', url: viaProxy.toString(), maxConnections: 5 });
  return { proxy, store };
}
