/**
 * Keel on a TLS-secured cluster: a TLS-terminating proxy run here (Node `tls`, ALPN h2, a client
 * certificate required) in front of the dev server's plain port. A Keel worker and KeelClient connect
 * through it with the CA, client certificate and server name from the configuration and run a turn;
 * `keel doctor` reports the connection it made; a wrong CA and a missing file are refused with errors
 * that name the setting. Certificates come from `openssl`, made per suite.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect as netConnect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server, type TLSSocket } from 'node:tls';
import { NativeConnection } from '@temporalio/worker';
import { configFromEnv, type KeelConfig } from '../../src/config/keel-config';
import { connectClient } from '../../src/cli/connect';
import { temporalConnectionFor } from '../../src/temporal/connection-for-config';
import { connectTemporal, UnreachableDependencyError } from '../../src/runtime/reach';
import { temporalConnectionOptions, TemporalTlsFileError } from '../../src/temporal/connection-options';
import { createKeelWorker } from '../../workers/create-worker';
import { fakeReply } from '../../src/testing';
import { testDatabases } from '../support/databases';
import { freshDurableAgent } from '../support/durable-turn-helpers';
import { integrationSuite } from '../support/integration';
import { testDeps } from '../support/keel-deps';
import { keel } from '../support/keel-cli';
import { uniqueTaskQueue } from '../support/temporal';

const SERVER_NAME = 'temporal.keel.test';
const certs = mkdtempSync(join(tmpdir(), 'keel-tls-'));
const file = (name: string) => join(certs, name);

/** A CA, a server certificate for SERVER_NAME and a client certificate, both signed by it; and a second, unrelated CA. */
function makeCertificates(): void {
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: certs, stdio: 'pipe' });
  for (const ca of ['ca', 'other-ca'])
    ssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      `/CN=${ca}`,
      '-keyout',
      `${ca}.key`,
      '-out',
      `${ca}.crt`,
    );
  // X.509 v3 (rustls, under the worker's connection, refuses v1): each certificate gets its extensions.
  writeFileSync(file('server.ext'), `subjectAltName=DNS:${SERVER_NAME}\nextendedKeyUsage=serverAuth\n`);
  writeFileSync(file('client.ext'), 'extendedKeyUsage=clientAuth\n');
  for (const name of ['server', 'client']) {
    ssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      `/CN=${name}`,
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
    );
    ssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '2',
      '-out',
      `${name}.crt`,
      '-extfile',
      `${name}.ext`,
    );
  }
}

/** Terminates TLS (client certificate required, ALPN h2) and pipes the bytes to the dev server's plain gRPC port. */
async function startTlsProxy(target: string): Promise<{ address: string; close(): Promise<void> }> {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  const server: Server = createServer(
    {
      key: readFileSync(file('server.key')),
      cert: readFileSync(file('server.crt')),
      ca: readFileSync(file('ca.crt')),
      requestCert: true,
      rejectUnauthorized: true,
      ALPNProtocols: ['h2'],
    },
    (socket: TLSSocket) => {
      const upstream = netConnect(port, host);
      socket.pipe(upstream).pipe(socket);
      socket.on('error', () => upstream.destroy());
      upstream.on('error', () => socket.destroy());
    },
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const suite = integrationSuite();
let proxy: { address: string; close(): Promise<void> };
beforeAll(async () => {
  makeCertificates();
});
afterAll(async () => {
  await proxy?.close();
  rmSync(certs, { recursive: true, force: true });
});

/** The environment of a process on the TLS cluster, as an operator sets it. */
function tlsEnv(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    TEMPORAL_ADDRESS: proxy.address,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: file('ca.crt'),
    TEMPORAL_TLS_CLIENT_CERT_PATH: file('client.crt'),
    TEMPORAL_TLS_CLIENT_KEY_PATH: file('client.key'),
    TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
    ...overrides,
  };
}

describe.each(testDatabases())('Temporal over mTLS on $name', (database) => {
  const db = suite.storePerTest(database);
  beforeAll(async () => {
    proxy ??= await startTlsProxy(suite.env.address);
  });

  it('runs a turn through a worker and a KeelClient that connect with the configured CA, client certificate and server name', async () => {
    const taskQueue = uniqueTaskQueue('keel-tls');
    const config: KeelConfig = configFromEnv({ ...tlsEnv(), KEEL_TASK_QUEUE: taskQueue });
    const options = temporalConnectionFor(config);
    expect(options).toMatchObject({
      address: proxy.address,
      tls: { serverNameOverride: SERVER_NAME, clientCertPair: { crt: expect.any(Buffer), key: expect.any(Buffer) } },
    });

    const connection = await NativeConnection.connect(options);
    const worker = await createKeelWorker({
      connection,
      namespace: config.temporalNamespace,
      taskQueue,
      deps: testDeps(db.store, suite.fake.url),
      workflowBundle: suite.env.bundle,
      shutdownGraceMs: 2_000,
    });
    const running = worker.run();
    const { client, close } = await connectClient(config);
    try {
      suite.fake.enqueue(fakeReply.text('over TLS'));
      const key = `agent:${freshDurableAgent()}:main`;
      expect((await client.sendMessage(key, 'hello through the proxy')).reply).toBe('over TLS');
    } finally {
      await close();
      worker.shutdown();
      await running;
      await connection.close();
    }
  });

  it('has keel doctor report the connection it made', async () => {
    const home = mkdtempSync(join(tmpdir(), 'keel-tls-home-'));
    try {
      const run = await keel(['doctor'], { ...tlsEnv(), KEEL_HOME: home, DATABASE_URL: undefined });
      expect(run.stderr).toContain(
        `temporal  connected to ${proxy.address}, namespace default, TLS (CA: ${file('ca.crt')}, client certificate ${file('client.crt')}, server name ${SERVER_NAME})`,
      );
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('refuses a server whose certificate the configured CA did not sign, naming the settings to check', async () => {
    const options = temporalConnectionOptions(
      configFromEnv(tlsEnv({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: file('other-ca.crt') })),
      proxy.address,
    );
    const refusal = await connectTemporal(options).then(
      async (c) => {
        await c.close();
        return undefined;
      },
      (err: unknown) => err,
    );
    expect(refusal).toBeInstanceOf(UnreachableDependencyError);
    expect((refusal as Error).message).toMatch(
      new RegExp(
        `^cannot reach Temporal over TLS at ${proxy.address} \\(TEMPORAL_ADDRESS\\): TLS handshake failed: .*certificate.*; check the CA \\(TEMPORAL_TLS_SERVER_CA_CERT_PATH\\)`,
      ),
    );
  });

  it('is refused by a server that requires a client certificate when none is configured', async () => {
    const options = temporalConnectionOptions(
      configFromEnv(tlsEnv({ TEMPORAL_TLS_CLIENT_CERT_PATH: '', TEMPORAL_TLS_CLIENT_KEY_PATH: '' })),
      proxy.address,
    );
    expect(options.tls).not.toHaveProperty('clientCertPair');
    await expect(connectTemporal(options)).rejects.toThrow(
      /^cannot reach Temporal over TLS at .*: TLS handshake failed: .*certificate/,
    );
  });
});

describe('temporalConnectionOptions', () => {
  it.each([
    [
      'a missing CA file',
      { TEMPORAL_TLS_SERVER_CA_CERT_PATH: '/nonexistent/ca.pem' },
      /^TEMPORAL_TLS_SERVER_CA_CERT_PATH \(keel.config.json temporalTlsCaPath\): cannot read \/nonexistent\/ca.pem \(ENOENT\)/,
    ],
    [
      'a key without its certificate',
      { TEMPORAL_TLS_CLIENT_KEY_PATH: '/some/client.key' },
      /^TEMPORAL_TLS_CLIENT_CERT_PATH \(keel.config.json temporalTlsCertPath\): not set: a client certificate needs its key/,
    ],
  ])('refuses %s, naming the setting', (_what, env, message) => {
    const config = configFromEnv({ TEMPORAL_ADDRESS: 'temporal:7233', ...env });
    expect(() => temporalConnectionOptions(config, 'temporal:7233')).toThrow(TemporalTlsFileError);
    expect(() => temporalConnectionOptions(config, 'temporal:7233')).toThrow(message);
  });

  it('refuses a file that is not PEM', () => {
    writeFileSync(file('not.pem'), 'hello');
    const config = configFromEnv({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: file('not.pem') });
    expect(() => temporalConnectionOptions(config, 'temporal:7233')).toThrow(/not a PEM file/);
  });

  it('connects plain without TLS settings, and over TLS with the system roots for an API key (Temporal Cloud)', () => {
    expect(temporalConnectionOptions(configFromEnv({}), 'localhost:7233')).toEqual({ address: 'localhost:7233' });
    expect(
      temporalConnectionOptions(configFromEnv({ TEMPORAL_API_KEY: 'secret' }), 'ns.acct.tmprl.cloud:7233'),
    ).toEqual({ address: 'ns.acct.tmprl.cloud:7233', tls: {}, apiKey: 'secret' });
    expect(
      temporalConnectionOptions(configFromEnv({ TEMPORAL_API_KEY: 'secret', TEMPORAL_TLS: 'off' }), 'proxy:7233'),
    ).toEqual({ address: 'proxy:7233', tls: false, apiKey: 'secret' });
  });
});
