/**
 * On the real path. Extractive: an imported 1,800-line session with planted decisions, preferences, an
 * instruction, a deadline, a person's role and an error with its cause is compacted 10 times by the
 * compaction workflow with no model configured (extractive summaries), the session file growing
 * and re-imported between compactions as a live transcript would. The last summary quotes every
 * fact with the time of its message, and no summarizer request was sent. Model: the summarizer
 * sees each message's time, and a summary that drops a decision is asked once to quote it, then
 * gets it appended verbatim with its time.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testDatabases } from '../support/databases';
import { integrationSuite } from '../support/integration';
import { ensureSession } from '../support/ensure-session';
import { freshAgent, promptOf, runCompaction, seedSession } from './support';
import { fakeReply } from '../../src/testing';
import { appendEntries } from '../../src/store/entries-repo';
import { estimateTokens } from '../../src/context/estimate-tokens';
import type { AgentMessage } from '../../src/context/types';
import { joinLines, toLines } from '../fixtures/generate';
import { importTranscriptFile } from '../../src/transfer/import-jsonl';
import { loadActiveEntries } from '../../src/store/entries-repo';
import { listCompactions } from '../../src/store/compactions-repo';
import { EXTRACTIVE_SUMMARY_HEADER } from '../../src/compaction/extractive-summary';
import { PRESERVED_IDENTIFIERS_HEADING } from '../../src/compaction/quality-guard';
import { summaryCharBudget } from '../../src/compaction/summary-budget';
import { plantedSession, PLANTED_FACTS } from '../compaction/planted-session';

const suite = integrationSuite();
const WINDOW = 200_000;
const COMPACTIONS = 10;
const SHARE = 0.005;

describe.each(testDatabases())('spoken facts through the compaction workflow on $name', (database) => {
  const db = suite.storePerTest(database);
  let dir: string;
  beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'keel-spoken-'))));
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('keeps every planted fact with its time through 10 stacked extractive compactions of an imported session', () =>
    // The smallest window share an operator may set: the budget binds, and routine items make room for the facts.
    suite.withWorker(
      db.store,
      { config: { anthropicApiKey: undefined, anthropicBaseUrl: undefined, summaryMaxWindowShare: SHARE } },
      async (w) => {
        const { store, fake } = w;
        const agentId = freshAgent();
        const sessionKey = `agent:${agentId}:main`;
        const sessionId = randomUUID();
        await ensureSession(store.db, { agentId, sessionKey, newSessionId: sessionId, now: new Date() });
        const s = { agentId, sessionKey, sessionId, entryIds: [] };
        const { entries, plantedAt } = plantedSession(sessionId);
        const file = join(dir, 'session.jsonl');
        const sent = fake.requests.length;

        for (let k = 1; k <= COMPACTIONS; k++) {
          // The header and the first k tenths of the lines: an import adds only the new ones.
          await writeFile(
            file,
            joinLines(toLines(entries.slice(0, 1 + Math.round((k * (entries.length - 1)) / COMPACTIONS)))),
          );
          const report = await importTranscriptFile({ db: store.db, agentId, file, sessionId });
          expect(report.status).not.toBe('failed');
          const last = k === COMPACTIONS;
          const result = await runCompaction(w, s, {
            contextWindowTokens: WINDOW,
            trigger: last ? 'manual' : 'threshold',
            keepRecentTokens: last ? 0 : 3_000,
          });
          expect(result).toMatchObject({ status: 'succeeded', degraded: true });
        }

        expect(fake.requests.length).toBe(sent);
        expect(await listCompactions(store.db, { agentId, limit: 20 })).toHaveLength(COMPACTIONS);
        const summary = (await loadActiveEntries(store.db, agentId, sessionId)).compaction!.summary;
        expect(summary.startsWith(EXTRACTIVE_SUMMARY_HEADER)).toBe(true);
        expect(summary).toContain(`over ${COMPACTIONS} compactions.`);
        for (const fact of PLANTED_FACTS)
          expect(summary).toContain(`[${plantedAt.get(fact.text)}] ${fact.role}: ${fact.text}`);
        const prose = summary.split(`\n${PRESERVED_IDENTIFIERS_HEADING}`)[0]!;
        expect(prose.length).toBeLessThanOrEqual(summaryCharBudget(WINDOW, undefined, SHARE));
        expect(summary).not.toContain('Please look at the queue metrics for shard 0.');
      },
    ));

  it('asks a summarizer that dropped a decision to quote it, then appends it verbatim with its time', () =>
    suite.withWorker(db.store, {}, async (w) => {
      const { store, fake } = w;
      const s = await seedSession(store.db, 4);
      const decision = "Let's decide: use advisory locks per account instead of SERIALIZABLE. Write that down.";
      const at = Date.UTC(2026, 2, 4, 14, 10);
      const message: AgentMessage = { role: 'user', content: `About the ledger race. ${decision}`, timestamp: at };
      const parentId = s.entryIds.at(-1)!;
      await appendEntries(store.db, s.agentId, s.sessionId, [
        {
          entry: { type: 'message', id: 'm-decision', parentId, timestamp: new Date(at).toISOString(), message },
          tokenEstimate: estimateTokens(message),
        },
      ]);
      // A summarizer that paraphrases the decision away, also when asked again.
      fake.respondWith(() =>
        fakeReply.text(
          '## Goal\nFix the ledger race.\n\n## Decisions\n- Locking was discussed.\n\n## Constraints\n- none',
        ),
      );
      const sent = fake.requests.length;

      await runCompaction(w, s, { trigger: 'manual', keepRecentTokens: 0 });

      const requests = fake.requests.slice(sent);
      expect(requests).toHaveLength(2);
      const quoted = `[2026-03-04 14:10] user: ${decision}`;
      // The chunk shows each message's time; the revision lists the decision with it.
      expect(promptOf(requests[0]!)).toContain(`[2026-03-04 14:10] [User]: About the ledger race.`);
      expect(promptOf(requests[1]!)).toMatch(/quot(?:e|ing) each of these word for word with its time/);
      expect(promptOf(requests[1]!)).toContain(JSON.stringify(quoted).slice(1, -1));
      const summary = (await loadActiveEntries(store.db, s.agentId, s.sessionId)).compaction!.summary;
      expect(summary).toContain(`## Decisions and instructions (verbatim)\n- ${quoted}`);
      expect(summary).toContain('## Goal\nFix the ledger race.');
    }));
});
