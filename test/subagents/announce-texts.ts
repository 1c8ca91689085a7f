import { getSession } from '../../src/store/sessions-repo';
import { allEntries } from '../support/store-readers';
import type { Store } from '../../src/store/connect';
import type { MessageEntry, UserMessage } from '../../src/context/types';

/** The parent's user entries that are subagent announces, by text. */
export async function announceTexts(store: Store, sessionKey = 'agent:main:main', agentId = 'main'): Promise<string[]> {
  const session = await getSession(store.db, agentId, sessionKey);
  if (!session) return [];
  return (await allEntries(store.db, agentId, session.session_id))
    .map((row) => (row.payload as unknown as MessageEntry).message)
    .filter(
      (m): m is UserMessage => m?.role === 'user' && typeof m.content === 'string' && m.content.startsWith('[Subagent'),
    )
    .map((m) => m.content as string);
}
