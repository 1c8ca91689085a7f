import type { Logger } from 'pino';
import type { KeelSettings } from '../config/agent-config';
import type { Runtime } from '../runtime/activity-deps';
import type { KeelClient } from '../client/keel-client';

/** Temporal + database + worker + client in one process: what `npm run dev` runs. */
export interface LocalStack {
  readonly client: KeelClient;
  readonly runtime: Runtime;
  readonly temporalAddress: string;
  readonly uiUrl?: string | undefined;
  /** Where the worker's log lines go (`keel dev`: a file, so they never cover the chat). */
  readonly logFile?: string | undefined;
  /** The stack's log (into `logFile` when there is one): the HTTP API beside it logs there too. */
  readonly logger?: Logger | undefined;
  /** Stops everything in reverse order of starting. */
  stop(): Promise<void>;
  /** When stop() hangs: kills the Temporal dev server and removes the stack's files now. */
  kill(): void;
}

/**
 * Starts the embedded stack. The CLI gets it from its entry point (workers/keel.ts), because running
 * a worker in-process makes it a composition root, and src/ never imports workers/.
 */
export type StartLocalStack = (settings: KeelSettings, log: (line: string) => void) => Promise<LocalStack>;

/**
 * Runs a worker until SIGINT/SIGTERM (`keel worker`): for TEMPORAL_ADDRESS / DATABASE_URL, or the
 * embedded stack running under KEEL_HOME. Composition root like StartLocalStack.
 */
/** Runs a worker until it drains; `pretty` logs for a person at a terminal (else JSON lines). */
export type RunWorker = (settings: KeelSettings, opts?: { pretty?: boolean }) => Promise<void>;

/** What the CLI needs from the layers above it. */
export interface CliRoots {
  readonly startLocalStack: StartLocalStack;
  readonly runWorker: RunWorker;
}
