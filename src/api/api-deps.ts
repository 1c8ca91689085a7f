import type { Kysely } from 'kysely';
import type { KeelClient } from '../client/keel-client';
import type { KeelSettings } from '../config/agent-config';
import type { Database } from '../store/schema';
import type { Dependencies } from './problem';

/** What the HTTP API's routes work with: the process opens them once (`keel serve`, `keel dev`). */
export interface ApiDeps {
  /** Turns, status and compaction by Temporal; it streams reply text when it was built with a stream. */
  readonly client: KeelClient;
  /** Sessions and compaction records. */
  readonly db: Kysely<Database>;
  /** The agents' settings (windows, models, KEEL_ALLOWED_AGENTS, the task queue). */
  readonly settings: KeelSettings;
  /** Temporal and the database as configured, named by a 503 when either does not answer. */
  readonly dependencies: Dependencies;
  /** The bearer token every request must carry; unset only on loopback. */
  readonly token?: string;
  /** How often the events stream asks the session for unsolicited replies (tests shorten it). */
  readonly eventsPollMs?: number;
}
