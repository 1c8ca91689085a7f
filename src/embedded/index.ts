/**
 * `keel-agents/embedded`: the embedded PGlite database a worker opens when DATABASE_URL is unset
 * (`keel dev`, `npm run dev`). PGlite is an optional dependency of keel-agents: opening or serving it
 * without `@electric-sql/pglite` (and `@electric-sql/pglite-socket`) installed fails with
 * EmbeddedDatabaseMissingError, naming the package to install.
 *
 * @example
 *   import { openRuntime } from 'keel-agents/worker';
 *   import { replyStreamForStore } from 'keel-agents/embedded';
 *
 *   const runtime = await openRuntime({ config }); // PGlite under KEEL_HOME
 *   const stream = replyStreamForStore(runtime.store); // hears replies in this process
 */
export { replyStreamForStore } from '../streaming/reply-stream-for-store';
export { PgliteReplyStreamSubscriber } from './pglite-reply-subscriber';
export { servePglite, type ServedPglite } from './pglite-server';
export { EmbeddedDatabaseMissingError } from './embedded-database-missing-error';
export type { EmbeddedPglite } from './embedded-pglite';
