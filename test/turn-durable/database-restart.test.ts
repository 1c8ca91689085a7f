/**
 * PostgreSQL drops every connection of the worker (what a server restart does to a pool) in the
 * middle of 20 turns: the worker survives, each turn completes once, and no model call is billed twice.
 * PostgreSQL only: the connections of this test's pool are terminated by application name.
 */
import { Client as PgClient } from 'pg';
import { freshSchemaUrl } from '../support/databases';
import { fakeReply } from '../../src/testing';
import { integrationSuite } from '../support/integration';
import { freshDurableAgent, lastUserText } from '../support/durable-turn-helpers';
import { openStore } from '../../src/store/connect';
import { getSession } from '../../src/store/sessions-repo';
import type { MessageEntry } from '../../src/context/types';
import { allEntries } from '../support/store-readers';

const url = process.env.TEST_DATABASE_URL;
const suite = integrationSuite();

/** Terminates every server connection whose application_name is `name`. */
async function dropConnections(name: string): Promise<number> {
  const admin = new PgClient({ connectionString: url });
  await admin.connect();
  try {
    const { rows } = await admin.query(
      'select pg_terminate_backend(pid) as ok from pg_stat_activity where application_name = $1',
      [name],
    );
    return rows.length;
  } finally {
    await admin.end();
  }
}

(url ? describe : describe.skip)('a PostgreSQL restart in the middle of 20 turns', () => {
  it('answers every turn once and calls the model once per turn', async () => {
    const appName = `keel-restart-${Math.random().toString(36).slice(2, 8)}`;
    const schemaUrl = new URL(await freshSchemaUrl(url!));
    schemaUrl.searchParams.set('application_name', appName);
    const store = await openStore({ kind: 'postgres', url: schemaUrl.toString(), maxConnections: 5 });
    try {
      await suite.withWorker(store, {}, async ({ client, fake }) => {
        const calls = new Map<string, number>();
        let dropped = 0;
        fake.respondWith(async (request) => {
          const text = lastUserText(request);
          calls.set(text, (calls.get(text) ?? 0) + 1);
          // While the model "thinks" on turns 5 and 12, every connection of the worker's pool dies.
          if (text === 'turn 5' || text === 'turn 12') dropped += await dropConnections(appName);
          return fakeReply.text(`re: ${text}`);
        });
        const agent = freshDurableAgent();
        const key = `agent:${agent}:main`;
        for (let i = 1; i <= 20; i++) {
          const result = await client.sendMessage(key, `turn ${i}`);
          expect(result.reply).toBe(`re: turn ${i}`);
        }
        expect(dropped).toBeGreaterThan(0);
        expect([...calls.values()].every((n) => n === 1)).toBe(true);
        expect(calls.size).toBe(20);
        const session = await getSession(store.db, agent, key);
        const messages = (await allEntries(store.db, agent, session!.session_id))
          .filter((r) => r.type === 'message')
          .map((r) => (r.payload as unknown as MessageEntry).message);
        expect(messages).toHaveLength(40);
        expect(messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(
          Array.from({ length: 20 }, (_, i) => `turn ${i + 1}`),
        );
      });
    } finally {
      await store.close();
    }
  }, 600_000);
});
