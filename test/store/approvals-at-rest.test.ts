/**
 * A waiting call's arguments are conversation data: with encryption at rest on they are sealed in
 * `tool_approvals` like every other conversation column, bound to their row, and read back in plain
 * by the listing `keel approvals` and the API use.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { testDatabases } from '../support/databases';
import { atRestPlugin } from '../../src/security/at-rest';
import { parseKeyRing } from '../../src/security/key-ring';
import { getToolApproval, listPendingApprovals, openToolApproval } from '../../src/store/approvals-repo';

const ring = parseKeyRing(`K:${randomBytes(32).toString('base64')}`);
const PLANTED = 'plantedcustomerzebra';

const approval = (id: string) => ({
  id,
  agentId: 'main',
  sessionKey: 'agent:main:main',
  sessionId: 'session-1',
  toolName: 'send_invoice',
  toolCallId: `toolu_${id}`,
  arguments: { customer: PLANTED, amount: 500 },
  deadline: '2026-11-30T00:00:00.000Z',
  now: '2026-11-29T00:00:00.000Z',
});

describe.each(testDatabases())('approval arguments at rest on $name', (database) => {
  it('seals them when encryption at rest is on, reads them back in plain, and writes them plain when it is off', async () => {
    const store = await database.open();
    try {
      const sealing = store.db.withoutPlugins().withPlugin(atRestPlugin({ ring, seal: true }));
      await openToolApproval(sealing, approval('a1'));
      await openToolApproval(store.db.withoutPlugins().withPlugin(atRestPlugin({ ring, seal: false })), approval('a2'));

      const raw = await sql<{
        id: string;
        row: string;
      }>`select id, t::text as row from tool_approvals t order by id`.execute(store.db.withoutPlugins());
      expect(raw.rows.map((r) => [r.id, r.row.includes(PLANTED)])).toEqual([
        ['a1', false],
        ['a2', true],
      ]);
      const listed = await listPendingApprovals(sealing, 'main');
      expect(listed.map((r) => [r.id, r.arguments])).toEqual([
        ['a1', { customer: PLANTED, amount: 500 }],
        ['a2', { customer: PLANTED, amount: 500 }],
      ]);
      expect((await getToolApproval(sealing, 'a1'))?.arguments).toEqual({ customer: PLANTED, amount: 500 });
      // Without the key the sealed row does not read: the failure names the fix instead of showing ciphertext.
      await expect(
        getToolApproval(store.db.withoutPlugins().withPlugin(atRestPlugin({ seal: false })), 'a1'),
      ).rejects.toThrow(/KEEL_ENCRYPTION_KEYS/);
    } finally {
      await store.close();
    }
  });
});
