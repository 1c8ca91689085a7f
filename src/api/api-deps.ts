import type { Logger } from 'pino';
import type { ReplyStreamSubscriber } from '../streaming/reply-subscriber';
import type { Dependencies } from './problem';
import type { KeelOperations, KeelOperationsDeps } from '../operations/keel-operations';

/**
 * What the HTTP API's routes work with: the operations' client (it streams reply text when it was
 * built with a stream), store and settings (KEEL_ALLOWED_AGENTS too), opened once by `keel serve` or `keel dev`.
 */
export interface ApiDeps extends KeelOperationsDeps {
  /** Temporal and the database as configured, named by a 503 when either does not answer. */
  readonly dependencies: Dependencies;
  /** The bearer token every request must carry; unset only on loopback. */
  readonly token?: string;
  /** How often an events stream reads the transcript when no notice woke it (tests shorten it). */
  readonly eventsPollMs?: number;
  /** Where an events stream hears that its session wrote something unasked (LISTEN); without it, it polls. */
  readonly events?: ReplyStreamSubscriber;
  /** The server's log: what a route reports besides its answer (a kill's or a steer's outcome). Default: JSON lines on stdout. */
  readonly logger?: Logger;
}

/** What a route works with: the deps, and the operations built once from them (what the CLI runs too). */
export type RouteDeps = ApiDeps & { readonly operations: KeelOperations };
