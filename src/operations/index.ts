/**
 * `keel-agents/operations`: what `keel` and the console do to sessions, compactions, approvals and
 * subagents, as one object over the store and a client, for a console of your own. Kept off the
 * root entry because it reads the store: a client alone loads no database code.
 *
 * @example
 *   import { KeelClient, loadKeelSettings } from 'keel-agents';
 *   import { KeelOperations, openStore } from 'keel-agents/operations';
 *
 *   const store = await openStore({ kind: 'postgres', url: process.env.DATABASE_URL! });
 *   const operations = new KeelOperations({ client, db: store.db, settings: loadKeelSettings() });
 *   const { sessions } = await operations.sessions.list({ agentId: 'main' });
 */
export { KeelOperations, type KeelOperationsDeps } from './keel-operations';
export { OperationError, type OperationErrorKind } from './errors';
export { openStore, type Store, type StoreTarget } from '../store/connect';
