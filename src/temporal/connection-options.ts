/**
 * How every Keel process reaches Temporal: one function turns the configuration (environment and
 * keel.config.json, under Temporal's own variable names) into the options both the client's
 * `Connection` and the worker's `NativeConnection` take, so workers, clients, the CLI and the HTTP
 * API cannot connect differently.
 */
import { readFileSync } from 'node:fs';
import type { TLSConfig } from '@temporalio/client';
import type { KeelConfig } from '../config/keel-config';

/** The settings that decide a connection, as the configuration holds them. */
export type TemporalConnectionConfig = Pick<
  KeelConfig,
  | 'temporalNamespace'
  | 'temporalTls'
  | 'temporalTlsCaPath'
  | 'temporalTlsCertPath'
  | 'temporalTlsKeyPath'
  | 'temporalTlsServerName'
  | 'temporalApiKey'
>;

/** What `Connection.connect` and `NativeConnection.connect` both take. */
export interface TemporalConnectionOptions {
  readonly address: string;
  /** Absent or false: plain gRPC (a local dev server); false also keeps an API key from turning TLS on. */
  readonly tls?: TLSConfig | false;
  readonly apiKey?: string;
}

/** A certificate or key file named in the configuration cannot be used; the message names the setting and the file. */
export class TemporalTlsFileError extends Error {
  override readonly name = 'TemporalTlsFileError';
  constructor(
    readonly setting: string,
    /** The file; undefined when the setting is missing (a key without its certificate). */
    readonly path: string | undefined,
    reason: string,
  ) {
    super(
      path === undefined
        ? `${setting}: ${reason}`
        : `${setting}: cannot read ${path} (${reason}); point it at a readable PEM file, or unset it`,
    );
  }
}

/** Each TLS setting's names: the environment variable (Temporal's own) and the config file key. */
const SETTING_NAMES = {
  temporalTlsCaPath: 'TEMPORAL_TLS_SERVER_CA_CERT_PATH (keel.config.json temporalTlsCaPath)',
  temporalTlsCertPath: 'TEMPORAL_TLS_CLIENT_CERT_PATH (keel.config.json temporalTlsCertPath)',
  temporalTlsKeyPath: 'TEMPORAL_TLS_CLIENT_KEY_PATH (keel.config.json temporalTlsKeyPath)',
} as const;

/**
 * The connection options for the frontend at `address`. TLS is on when asked for (TEMPORAL_TLS) or
 * implied by a CA, a client certificate or an API key (Temporal Cloud takes API keys over TLS only),
 * unless TEMPORAL_TLS=off says otherwise. Certificate files are read now: a missing or unreadable one
 * fails here, naming its setting, not later as a handshake error.
 *
 * @example
 *   const connection = await Connection.connect(temporalConnectionOptions(config, 'ns.a1b2c.tmprl.cloud:7233'));
 */
export function temporalConnectionOptions(
  config: TemporalConnectionConfig,
  address: string,
): TemporalConnectionOptions {
  const apiKey = config.temporalApiKey ? { apiKey: config.temporalApiKey } : {};
  if (Boolean(config.temporalTlsCertPath) !== Boolean(config.temporalTlsKeyPath)) {
    const missing = config.temporalTlsCertPath ? SETTING_NAMES.temporalTlsKeyPath : SETTING_NAMES.temporalTlsCertPath;
    throw new TemporalTlsFileError(
      missing,
      undefined,
      'not set: a client certificate needs its key and a key its certificate; set both, or neither',
    );
  }
  const implied = Boolean(
    config.temporalTlsCaPath || config.temporalTlsCertPath || config.temporalApiKey || config.temporalTlsServerName,
  );
  if (!(config.temporalTls ?? implied)) return { address, ...(config.temporalApiKey ? { tls: false } : {}), ...apiKey };
  const tls: TLSConfig = {
    ...(config.temporalTlsCaPath
      ? { serverRootCACertificate: readPem('temporalTlsCaPath', config.temporalTlsCaPath) }
      : {}),
    ...(config.temporalTlsCertPath && config.temporalTlsKeyPath
      ? {
          clientCertPair: {
            crt: readPem('temporalTlsCertPath', config.temporalTlsCertPath),
            key: readPem('temporalTlsKeyPath', config.temporalTlsKeyPath),
          },
        }
      : {}),
    ...(config.temporalTlsServerName ? { serverNameOverride: config.temporalTlsServerName } : {}),
  };
  return { address, tls, ...apiKey };
}

/** One line for people: where and how a connection goes (never the key or file contents). */
export function describeTemporalConnection(config: TemporalConnectionConfig, address: string): string {
  const options = temporalConnectionOptions(config, address);
  const parts = [`${address}, namespace ${config.temporalNamespace}`];
  if (!options.tls) parts.push('plain (no TLS)');
  else {
    parts.push(`TLS (CA: ${config.temporalTlsCaPath ?? 'system roots'}`);
    if (config.temporalTlsCertPath) parts.push(`client certificate ${config.temporalTlsCertPath}`);
    if (config.temporalTlsServerName) parts.push(`server name ${config.temporalTlsServerName}`);
    parts[parts.length - 1] += ')';
  }
  if (options.apiKey) parts.push('API key');
  return parts.join(', ');
}

function readPem(setting: keyof typeof SETTING_NAMES, path: string): Buffer {
  let pem: Buffer;
  try {
    pem = readFileSync(path);
  } catch (err) {
    throw new TemporalTlsFileError(SETTING_NAMES[setting], path, (err as NodeJS.ErrnoException).code ?? String(err));
  }
  if (!pem.includes('-----BEGIN '))
    throw new TemporalTlsFileError(SETTING_NAMES[setting], path, 'not a PEM file: no -----BEGIN line');
  return pem;
}
