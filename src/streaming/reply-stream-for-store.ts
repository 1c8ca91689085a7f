import type { Store } from '../store/connect';
import { PgliteReplyStreamSubscriber } from '../embedded/pglite-reply-subscriber';
import { PgReplyStreamSubscriber } from './pg-reply-subscriber';
import type { ReplyStreamSubscriber } from './reply-subscriber';

/** The subscriber that hears replies written through `store`: its PGlite instance, or its PostgreSQL server. */
export function replyStreamForStore(store: Store, log?: (line: string) => void): ReplyStreamSubscriber {
  if (store.pglite) return new PgliteReplyStreamSubscriber(store.pglite, store.pgliteLock);
  if (store.target.kind !== 'postgres')
    throw new Error('keel: a PGlite store without its instance cannot stream replies');
  return new PgReplyStreamSubscriber({ connectionString: store.target.url, ...(log ? { log } : {}) });
}
