import { z } from 'zod';
import { testDatabases } from '../support/databases';
import { fakeReply } from '../../src/testing';
import { integrationSuite } from '../support/integration';
import { getSession } from '../../src/store/sessions-repo';
import { ToolRegistry } from '../../src/tools/registry';
import type { Store } from '../../src/store/connect';
import type { AgentMessage, MessageEntry } from '../../src/context/types';
import { allEntries } from '../support/store-readers';

const R = '\uFFFD';
const suite = integrationSuite();

const freshAgent = () => `p${Math.random().toString(36).slice(2, 10)}`;

async function storedMessages(store: Store, agent: string, key: string): Promise<AgentMessage[]> {
  const session = await getSession(store.db, agent, key);
  return (await allEntries(store.db, agent, session!.session_id))
    .filter((r) => r.type === 'message')
    .map((r) => (r.payload as unknown as MessageEntry).message);
}

describe.each(testDatabases())('text PostgreSQL cannot store, through real turns on $name', (database) => {
  const db = suite.storePerTest(database);

  it('a message and a reply holding NUL and a lone surrogate are stored with U+FFFD, and the next message is answered', () =>
    suite.withWorker(db.store, {}, async ({ client, store, fake }) => {
      fake.enqueue(fakeReply.text('echo \u0000 back'));
      fake.enqueue(fakeReply.text('second answer'));
      const agent = freshAgent();
      const key = `agent:${agent}:main`;
      await client.sendMessage(key, 'poison \u0000 and \ud800 here');
      const next = await client.sendMessage(key, 'a normal message');
      expect(next).toMatchObject({ reply: 'second answer', turn: 2 });
      const messages = await storedMessages(store, agent, key);
      expect(messages.map((m) => [m.role, m.content])).toEqual([
        ['user', `poison ${R} and ${R} here`],
        ['assistant', [expect.objectContaining({ type: 'text', text: `echo ${R} back` })]],
        ['user', 'a normal message'],
        ['assistant', [expect.objectContaining({ type: 'text', text: 'second answer' })]],
      ]);
    }));

  it('a tool called with NUL in its arguments and returning NUL runs once and its call and result are stored', async () => {
    let runs = 0;
    const tools = new ToolRegistry();
    tools.register({
      name: 'grep',
      description: 'search',
      input: z.object({ pattern: z.string() }),
      run: async ({ pattern }) => {
        runs++;
        return `found ${pattern}\u0000 in \udc00 file`;
      },
    });
    await suite.withWorker(db.store, { tools }, async ({ client, store, fake }) => {
      fake.enqueue(fakeReply.toolUse([{ id: 'toolu_1', name: 'grep', input: { pattern: 'x\u0000y' } }]));
      fake.enqueue(fakeReply.text('done'));
      const agent = freshAgent();
      const key = `agent:${agent}:main`;
      expect((await client.sendMessage(key, 'search please')).reply).toBe('done');
      expect(runs).toBe(1);
      // The tool read its arguments from the stored call, so it saw the replaced text too.
      const [, call, result] = await storedMessages(store, agent, key);
      expect(call).toMatchObject({ role: 'assistant', content: [{ name: 'grep', arguments: { pattern: `x${R}y` } }] });
      expect(result).toMatchObject({
        role: 'toolResult',
        content: [{ type: 'text', text: `found x${R}y${R} in ${R} file` }],
      });
    });
  });
});
