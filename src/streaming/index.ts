/**
 * `keel-agents/streaming`: hear replies as the workers write them, over the PostgreSQL server they
 * use (DATABASE_URL). Kept off the root entry so a client that waits for whole replies loads no
 * database driver.
 *
 * @example
 *   import { KeelClient } from 'keel-agents';
 *   import { PgReplyStreamSubscriber } from 'keel-agents/streaming';
 *
 *   const stream = new PgReplyStreamSubscriber({ connectionString: process.env.DATABASE_URL! });
 *   const client = new KeelClient({ connection, stream });
 */
export { PgReplyStreamSubscriber, type PgReplyStreamSubscriberOptions } from './pg-reply-subscriber';
