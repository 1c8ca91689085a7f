import { Connection } from '@temporalio/client';
import type { TemporalConnectionOptions } from '../temporal/connection-options';
import { tlsHandshakeProblem } from '../temporal/tls-handshake';

/**
 * How every entry point (`keel dev`, `keel worker`, `keel chat` and the other commands, the worker
 * process) reports a dependency it cannot reach at start: within a few seconds, in one line naming the
 * dependency, the address tried, the variable that set it and the fix. One function, so no command
 * prints a driver's raw error or waits on a connection's own retry loop.
 */

/** How long a start waits for a dependency to answer before it says it cannot reach it. */
export const REACH_TIMEOUT_MS = 5_000;

/** A dependency as a person configures it. */
export interface Dependency {
  /** What it is: "Temporal", "the database". */
  readonly name: string;
  /** Where it was looked for (without credentials). */
  readonly address: string;
  /** The setting that named the address. */
  readonly variable: string;
  /** What to do about it. */
  readonly fix: string;
}

/** A dependency that did not answer. The message is the one line to show. */
export class UnreachableDependencyError extends Error {
  override readonly name = 'UnreachableDependencyError';
  constructor(
    readonly dependency: Dependency,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(
      `cannot reach ${dependency.name} at ${dependency.address} (${dependency.variable}): ${reason}; ${dependency.fix}`,
      options,
    );
  }
}

/** The reason of a failed connection, in a few words (a timeout says how long was waited). */
function reasonOf(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  if (/timed? ?out|deadline/i.test(message)) return `no answer within ${REACH_TIMEOUT_MS / 1000} s`;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return `${code} (${message.split('\n')[0]})`;
  return message.split('\n')[0]!;
}

/** The one-line error for `dependency`, which failed with `err`. */
export function unreachable(dependency: Dependency, err: unknown): UnreachableDependencyError {
  return err instanceof UnreachableDependencyError
    ? err
    : new UnreachableDependencyError(dependency, reasonOf(err), { cause: err });
}

/** Runs `connect`; past {@link REACH_TIMEOUT_MS}, or when it fails, throws the one-line error for `dependency`. */
export async function withinReach<T>(dependency: Dependency, connect: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new UnreachableDependencyError(dependency, `no answer within ${REACH_TIMEOUT_MS / 1000} s`)),
      REACH_TIMEOUT_MS,
    );
    timer.unref();
  });
  try {
    return await Promise.race([connect(), deadline]);
  } catch (err) {
    throw unreachable(dependency, err);
  } finally {
    clearTimeout(timer);
  }
}

/** Temporal's frontend at `address`, as TEMPORAL_ADDRESS (or a running `keel dev`) named it. */
export function temporalDependency(address: string): Dependency {
  return {
    name: 'Temporal',
    address,
    variable: 'TEMPORAL_ADDRESS',
    fix: 'start the cluster (or `keel dev`) or fix TEMPORAL_ADDRESS',
  };
}

/** The PostgreSQL server DATABASE_URL names (its password hidden). */
export function databaseDependency(url: string): Dependency {
  return {
    name: 'the database',
    address: withoutPassword(url),
    variable: 'DATABASE_URL',
    fix: 'start PostgreSQL or fix DATABASE_URL',
  };
}

/** A client connection to Temporal (`temporalConnectionOptions`), or the one-line error within {@link REACH_TIMEOUT_MS}. */
export function connectTemporal(options: TemporalConnectionOptions): Promise<Connection> {
  if (!options.tls)
    return withinReach(temporalDependency(options.address), () =>
      Connection.connect({ ...options, connectTimeout: REACH_TIMEOUT_MS }),
    );
  const dependency = temporalTlsDependency(options.address);
  return withinReach(dependency, () => Connection.connect({ ...options, connectTimeout: REACH_TIMEOUT_MS })).catch(
    async (err: unknown) => {
      // The gRPC client only says nothing answered; a handshake of our own says why.
      const problem = await tlsHandshakeProblem(options);
      throw problem ? new UnreachableDependencyError(dependency, problem, { cause: err }) : err;
    },
  );
}

/** Temporal over TLS: a refused handshake is most often a setting, so the fix names them. */
function temporalTlsDependency(address: string): Dependency {
  return {
    ...temporalDependency(address),
    name: 'Temporal over TLS',
    fix: 'check the CA (TEMPORAL_TLS_SERVER_CA_CERT_PATH), the client certificate and key (TEMPORAL_TLS_CLIENT_CERT_PATH, TEMPORAL_TLS_CLIENT_KEY_PATH), and the server name (TEMPORAL_TLS_SERVER_NAME) (in keel.config.json: temporalTlsCaPath, temporalTlsCertPath, temporalTlsKeyPath, temporalTlsServerName)',
  };
}

/** Fails with the one-line error unless Temporal answers (a worker's start checks before it builds anything). */
export async function probeTemporal(options: TemporalConnectionOptions): Promise<void> {
  const connection = await connectTemporal(options);
  await connection.close();
}

/** The URL without its password, for messages. */
function withoutPassword(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparsable URL)';
  }
}
