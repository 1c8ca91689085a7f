/**
 * Subagents on the real path: the model calls `sessions_spawn`, the parent's session workflow starts
 * each child as a child workflow, the children run tools and finish, and each result reaches the
 * parent as exactly one entry that wakes it for a turn; a binary attachment reaches the child's
 * workspace byte for byte.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@temporalio/client';
import { integrationSuite } from '../support/integration';
import { testDatabases } from '../support/databases';
import { waitUntil } from '../support/wait-until';
import { sessionWorkflowId } from '../../src/sessions/session-key';
import { KeelParentSessionKey } from '../../src/temporal/search-attributes';
import { CITIES, PARENT_PROMPT, isChildRequest, lookupTools, messageText, subagentResponder } from './subagent-script';
import { announceTexts } from './announce-texts';
import { registerContextEngine } from '../../src/engine/registry';
import { LegacyContextEngine } from '../../src/engine/legacy';

const suite = integrationSuite();

/** A 1×1 PNG: bytes that are not UTF-8 text, so a decode into the message would corrupt them. */
const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

describe.each(testDatabases())('subagents on $name', (database) => {
  const db = suite.storePerTest(database);
  // One parent session per database: the other database's session workflow may still be open.
  const PARENT = `agent:main:${database.name}`;

  it('spawns three children in one turn; each announces once and the parent answers each', () => {
    // The agent's workspace: where a child finds the binary attachment its spawn carried.
    const workspaceDir = mkdtempSync(join(tmpdir(), 'keel-spawn-'));
    return suite.withWorker(
      db.store,
      { tools: lookupTools(), config: { workspaceDir } },
      async ({ client, fake, store }) => {
        // The suite's fake serves every test: this test's requests start here.
        const before = fake.requests.length;
        fake.respondWith(
          subagentResponder({
            spawnInput: (city) => ({
              task: `Look up ${city} and report its population.`,
              label: city,
              ...(city === 'Oslo'
                ? { attachments: [{ name: 'map.png', content: PNG_BASE64, encoding: 'base64' }] }
                : {}),
            }),
          }),
        );
        const first = await client.sendMessage(PARENT, PARENT_PROMPT);
        expect(first.reply).toBe('Waiting for my subagents.');

        const announces = await waitUntil('three announces in the parent', async () => {
          const texts = await announceTexts(store, PARENT);
          return texts.length >= 3 && texts;
        });
        // The parent answers each announce in its own turn.
        await waitUntil(
          'the parent to answer every announce',
          async () =>
            (await client.getStatus(PARENT)).turnsCompleted === 4 && (await client.getStatus(PARENT)).queuedTurns === 0,
        );
        expect(announces).toHaveLength(3);
        for (const city of CITIES) {
          const mine = announces.filter((t) => t.includes(`"${city}"`));
          expect(mine).toHaveLength(1);
          expect(mine[0]).toContain(`${city} has population ${city.length * 100_000}.`);
          expect(mine[0]).toMatch(/sessions_history with sessionKey "agent:main:subagent:[0-9a-f-]{36}"/);
        }
        expect((await announceTexts(store, PARENT)).length).toBe(3);

        // What landed in PostgreSQL: three finished runs, one claimed announce each.
        const runs = await store.db.selectFrom('subagent_runs').selectAll().execute();
        expect(runs.map((r) => [r.label, r.status, r.mode, r.depth]).sort()).toEqual(
          CITIES.map((c) => [c, 'done', 'run', 1]).sort(),
        );
        expect(
          runs.every((r) => r.ended_at !== null && r.workflow_id === sessionWorkflowId('main', r.child_session_key)),
        ).toBe(true);
        const claims = await store.db.selectFrom('subagent_announces').selectAll().execute();
        expect(claims.map((c) => c.subagent_id).sort()).toEqual(runs.map((r) => r.id).sort());

        // What the model saw: each child got its task as its first message, a minimal prompt, and the lookup tool.
        const childRequests = fake.requests.slice(before).filter(isChildRequest);
        const firstOfEach = childRequests.filter((r) => r.body.messages!.length === 1);
        const oslo = runs.find((r) => r.label === 'Oslo')!;
        const png = Buffer.from(PNG_BASE64, 'base64');
        const pngAt = `attachments/${oslo.id}/map.png`;
        expect(firstOfEach.map((r) => messageText(r.body.messages![0])).sort()).toEqual(
          CITIES.map(
            (c) =>
              `Look up ${c} and report its population.` +
              (c === 'Oslo'
                ? `\n\nAttachment map.png: binary, ${png.length} bytes (SHA-256 ${createHash('sha256').update(png).digest('hex')}), saved in your workspace as ${pngAt}`
                : ''),
          ).sort(),
        );
        // The PNG reached the child's workspace byte for byte.
        expect(readFileSync(join(workspaceDir, pngAt)).equals(png)).toBe(true);
        const childSystem = JSON.stringify(firstOfEach[0]!.body.system);
        expect(childSystem).not.toContain('## Messaging');
        expect(firstOfEach[0]!.body.tools!.map((t) => t.name)).toContain('lookup');
        // The parent's tools carry the subagent tools with their schemas.
        const parentFirst = fake.requests.slice(before).find((r) => !isChildRequest(r))!;
        const spawnTool = parentFirst.body.tools!.find((t) => t.name === 'sessions_spawn')!;
        expect(spawnTool.input_schema.required).toEqual(['task']);
        expect(parentFirst.body.tools!.map((t) => t.name)).toEqual(
          expect.arrayContaining(['sessions_send', 'sessions_history', 'subagents']),
        );

        // Temporal: each child is a child workflow of the parent's session workflow, filterable by its parent.
        const child = runs[0]!;
        const described = await new Client({
          connection: suite.env.connection,
          namespace: suite.env.namespace,
        }).workflow
          .getHandle(child.workflow_id!)
          .describe();
        expect(described.parentExecution?.workflowId).toBe(sessionWorkflowId('main', PARENT));
        expect(described.status.name).toBe('COMPLETED');
        expect(described.typedSearchAttributes.get(KeelParentSessionKey)).toBe(PARENT);
      },
    );
  });

  it("calls the context engine's prepareSubagentSpawn before the child starts and onSubagentEnded when it ends", async () => {
    const calls: string[] = [];
    class HookedEngine extends LegacyContextEngine {
      async prepareSubagentSpawn(p: { parentSessionKey: string; childSessionKey: string }) {
        calls.push(`prepare ${p.parentSessionKey} -> ${p.childSessionKey}`);
      }
      async onSubagentEnded(p: { childSessionKey: string; outcome: string }) {
        calls.push(`ended ${p.childSessionKey} ${p.outcome}`);
      }
    }
    const unregister = registerContextEngine('subagent-hooks', () => new HookedEngine());
    try {
      await suite.withWorker(
        db.store,
        { tools: lookupTools(), config: { contextEngine: 'subagent-hooks' } },
        async ({ client, fake, store }) => {
          const before = fake.requests.length;
          fake.respondWith(subagentResponder({ cities: ['Oslo'] }));
          const key = `${PARENT}-hooks`;
          await client.sendMessage(key, PARENT_PROMPT);
          await waitUntil('the announce', async () => (await announceTexts(store, key)).length === 1);
          const [run] = await store.db.selectFrom('subagent_runs').selectAll().execute();
          expect(calls).toEqual([`prepare ${key} -> ${run!.child_session_key}`, `ended ${run!.child_session_key} ok`]);
          // The child's first model request came after the hook prepared it.
          expect(fake.requests.slice(before).some(isChildRequest)).toBe(true);
          await waitUntil('the parent to answer', async () => (await client.getStatus(key)).turnsCompleted === 2);
        },
      );
    } finally {
      unregister();
    }
  });
});
