/**
 * Why a TLS connection to Temporal fails, in words. The gRPC clients retry a refused handshake until
 * their deadline and then say only that nothing answered; one handshake of our own, with the same CA,
 * client certificate and server name, names the cause ("unable to verify the first certificate").
 */
import { connect } from 'node:tls';
import type { TemporalConnectionOptions } from './connection-options';

/** How long the diagnostic handshake may take. */
const HANDSHAKE_TIMEOUT_MS = 3_000;
/** How long after its own side of the handshake the client waits for the server's refusal of its certificate. */
const CERTIFICATE_ALERT_WAIT_MS = 500;

/** The handshake's error message, or undefined when it succeeds (the problem is elsewhere) or times out. */
export function tlsHandshakeProblem(options: TemporalConnectionOptions): Promise<string | undefined> {
  const tls = options.tls;
  if (!tls) return Promise.resolve(undefined);
  const at = options.address.lastIndexOf(':');
  const host = options.address.slice(0, at);
  return new Promise((resolve) => {
    const socket = connect({
      host,
      port: Number(options.address.slice(at + 1)),
      servername: tls.serverNameOverride ?? host,
      ALPNProtocols: ['h2'],
      ...(tls.serverRootCACertificate ? { ca: Buffer.from(tls.serverRootCACertificate) } : {}),
      ...(tls.clientCertPair
        ? { cert: Buffer.from(tls.clientCertPair.crt), key: Buffer.from(tls.clientCertPair.key) }
        : {}),
    });
    const done = (problem: string | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(problem);
    };
    const timer = setTimeout(() => done(undefined), HANDSHAKE_TIMEOUT_MS);
    timer.unref();
    // Under TLS 1.3 a server refuses a client certificate after the client finished its side: wait for that alert.
    socket.once('secureConnect', () => setTimeout(() => done(undefined), CERTIFICATE_ALERT_WAIT_MS).unref());
    socket.once('error', (err) => done(`TLS handshake failed: ${err.message}`));
  });
}
