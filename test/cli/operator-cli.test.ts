import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { sql } from 'kysely';
import { keel } from '../support/keel-cli';
import { openStore, type Store, type StoreTarget } from '../../src/store/connect';
import { freshSchemaUrl } from '../support/databases';
import { appendEntries } from '../../src/store/entries-repo';
import { rotateSession } from '../../src/store/sessions-repo';
import { ensureSession } from '../support/ensure-session';
import { createCompactionRow, markSucceeded, writeCompactionRecord } from '../../src/store/compactions-repo';
import type { AgentMessage, TranscriptEntry } from '../../src/context/types';

// Every case starts `keel` processes (ts-node) several times: under load one needs more than jest's default.
jest.setTimeout(300_000);

const KEY = 'agent:ops:main';
const at = (minute: number) => new Date(Date.UTC(2026, 10, 20, 10, minute)).toISOString();
const msg = (id: string, parentId: string | null, minute: number, message: AgentMessage): TranscriptEntry => ({
  type: 'message',
  id,
  parentId,
  timestamp: at(minute),
  message,
});
const user = (text: string): AgentMessage => ({ role: 'user', content: text });

/** A session with a history worth operating on, and a fault of each kind doctor checks. */
async function plant(store: Store): Promise<void> {
  const db = store.db;
  const now = new Date();
  // The key's earlier transcript (before a reset), then its current one.
  await ensureSession(db, {
    agentId: 'ops',
    sessionKey: KEY,
    newSessionId: 's0',
    now: new Date(now.getTime() - 86_400_000),
  });
  await appendEntries(db, 'ops', 's0', [{ entry: msg('old-1', null, 0, user('before the reset')), tokenEstimate: 5 }]);
  await rotateSession(db, { agentId: 'ops', sessionKey: KEY, newSessionId: 's1', now });
  const entries: TranscriptEntry[] = [
    { type: 'session', id: 'head', timestamp: at(1), version: 3 } as TranscriptEntry,
    msg('u1', 'head', 2, user('read the file')),
    // Fault: a tool call whose result never arrived (the worker died between call and result).
    msg('a1', 'u1', 3, {
      role: 'assistant',
      content: [{ type: 'toolCall', id: 'call-lost', name: 'read', arguments: { path: 'a' } }],
      stopReason: 'toolUse',
    }),
    msg('u2', 'a1', 4, user('and the other one')),
    msg('a2', 'u2', 5, {
      role: 'assistant',
      content: [{ type: 'toolCall', id: 'call-ok', name: 'read', arguments: { path: 'b' } }],
      stopReason: 'toolUse',
    }),
    msg('r2', 'a2', 6, {
      role: 'toolResult',
      toolCallId: 'call-ok',
      toolName: 'read',
      content: [{ type: 'text', text: 'b' }],
    }),
    // Fault: a result for a call nobody made.
    msg('r9', 'r2', 7, {
      role: 'toolResult',
      toolCallId: 'call-nobody',
      toolName: 'read',
      content: [{ type: 'text', text: '?' }],
    }),
    // Fault: a broken parent chain.
    msg('u3', 'vanished', 8, user('thanks')),
  ];
  await appendEntries(
    db,
    'ops',
    's1',
    entries.map((entry) => ({ entry, tokenEstimate: 10 })),
  );
  // Two compactions, the second summary changing one line of the first.
  for (const [id, summary, firstKept, minute] of [
    ['c1', 'Goal: read files\nDone: a', 'u2', 20],
    ['c2', 'Goal: read files\nDone: a and b', 'u3', 30],
  ] as const) {
    await createCompactionRow(db, {
      id,
      agentId: 'ops',
      sessionKey: KEY,
      sessionId: 's1',
      trigger: 'manual',
      workflowId: null,
      retryOf: null,
      now: new Date(at(minute)),
      countAttempt: true,
    });
    await writeCompactionRecord(db, {
      agentId: 'ops',
      sessionKey: KEY,
      sessionId: 's1',
      entryId: id,
      summary,
      firstKeptEntryId: firstKept,
      tokensBefore: 9000,
      tokensAfter: 1200,
      now: new Date(at(minute)),
    });
    await markSucceeded(db, {
      agentId: 'ops',
      id,
      now: new Date(at(minute)),
      status: 'succeeded',
      degraded: false,
      tokensBefore: 9000,
      tokensAfter: 1200,
      firstKeptEntryId: firstKept,
      entryId: id,
    } as Parameters<typeof markSucceeded>[1]);
  }
  await sql`update sessions set context_tokens = 150000 where agent_id = 'ops'`.execute(db);
  // Fault: the counter disagrees with the transcript (2 compaction entries).
  await sql`update sessions set compaction_count = 5 where agent_id = 'ops'`.execute(db);
  // Fault: a compaction row left running two hours ago.
  await createCompactionRow(db, {
    id: 'c-stuck',
    agentId: 'ops',
    sessionKey: KEY,
    sessionId: 's1',
    trigger: 'threshold',
    workflowId: null,
    retryOf: null,
    now: new Date(Date.now() - 2 * 3600_000),
    countAttempt: true,
  });
  // Fault: raw tool arguments of the rotated transcript, which no turn will ever run.
  await db
    .insertInto('pending_tool_args')
    .values({
      agent_id: 'ops',
      session_id: 's0',
      assistant_entry_id: 'old-a',
      tool_call_id: 'old-call',
      arguments: JSON.stringify({ x: 1 }),
      created_at: now,
    })
    .execute();
}

/** The CLI's own database: the PGlite folder under KEEL_HOME, and a PostgreSQL schema when TEST_DATABASE_URL is set. */
const variants: Array<{ name: string; databaseUrl: () => Promise<string | undefined> }> = [
  { name: 'PGlite', databaseUrl: async () => undefined },
];
if (process.env.TEST_DATABASE_URL)
  variants.push({ name: 'PostgreSQL', databaseUrl: () => freshSchemaUrl(process.env.TEST_DATABASE_URL!) });

describe.each(variants)(
  'the operator CLI on $name: sessions, compactions show, doctor, export of any transcript, actionable errors',
  (variant) => {
    let home: string;
    let env: Record<string, string | undefined>;
    let target: StoreTarget;
    beforeAll(async () => {
      home = await mkdtemp(join(tmpdir(), 'keel-ops-'));
      const databaseUrl = await variant.databaseUrl();
      target = databaseUrl ? { kind: 'postgres', url: databaseUrl } : { kind: 'pglite', dataDir: resolve(home, 'db') };
      env = {
        KEEL_HOME: home,
        DATABASE_URL: databaseUrl,
        TEMPORAL_ADDRESS: undefined,
        KEEL_CONFIG: undefined,
        KEEL_MAINTENANCE_MODE: undefined,
        KEEL_CONTEXT_WINDOW: undefined,
      };
      const store = await openStore(target);
      try {
        await plant(store);
      } finally {
        await store.close();
      }
    });
    const withDb = async <T>(fn: (store: Store) => Promise<T>): Promise<T> => {
      const store = await openStore(target);
      try {
        return await fn(store);
      } finally {
        await store.close();
      }
    };

    it('help comes from commander and goes to stdout; a bad option is usage (exit 2)', async () => {
      const help = await keel(['--help'], env);
      expect(help.code).toBe(0);
      expect(help.stderr).toBe('');
      for (const command of ['sessions', 'doctor', 'compactions', 'export', 'maintenance'])
        expect(help.stdout).toContain(command);
      const bad = await keel(['sessions', '--active', 'soon'], env);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--active must be a number');
    });

    it('sessions lists each session with turns, usage, pressure, compactions and model', async () => {
      const run = await keel(['sessions', '--agent', 'ops', '--json'], env);
      expect(run.code).toBe(0);
      const { sessions } = JSON.parse(run.stdout);
      expect(sessions).toEqual([
        expect.objectContaining({
          sessionKey: KEY,
          agentId: 'ops',
          sessionId: 's1',
          turns: 3,
          contextTokens: 150000,
          contextWindow: 200000,
          percentUsed: 75,
          pressure: '70',
          compactions: 5,
          modelOverride: false,
          earlierSessionIds: 1,
        }),
      ]);
      const people = await keel(['sessions'], env);
      expect(people.stderr).toMatch(/agent:ops:main {2}agent ops {2}session s1/);
      expect(people.stderr).toMatch(
        /\[[█░]+\] 75\.0% of 200k tokens · above 70% · warning: over 65% of the window used; .* · turns 3 · compactions 5/,
      );
      expect((await keel(['sessions', '--agent', 'nobody', '--json'], env)).stdout).toContain('"sessions": []');

      // A learned provider limit and this session's estimate scale narrow its window, and it says so.
      const model = (sessions as Array<{ model: string }>)[0]!.model;
      await withDb(async ({ db }) => {
        await db
          .insertInto('model_limits')
          .values({
            model,
            context_window: 190_000,
            provider_max_tokens: 200_000,
            provider_message: 'prompt is too long: 201000 tokens > 200000 maximum',
            learned_at: new Date(),
          })
          .execute();
        await sql`update sessions set estimate_scales = jsonb_build_object(${model}::text, 0.5::double precision) where agent_id = 'ops'`.execute(
          db,
        );
      });
      try {
        const narrowed = JSON.parse((await keel(['sessions', '--agent', 'ops', '--json'], env)).stdout).sessions;
        expect(narrowed).toEqual([
          expect.objectContaining({ sessionKey: KEY, contextWindow: 95_000, estimateScale: 0.5, pressure: '85' }),
        ]);
        expect((await keel(['sessions'], env)).stderr).toContain(
          "window 50% of the model's: the provider counts this session's content denser than Keel's estimate",
        );
      } finally {
        await withDb(async ({ db }) => {
          await db.deleteFrom('model_limits').where('model', '=', model).execute();
          await sql`update sessions set estimate_scales = null where agent_id = 'ops'`.execute(db);
        });
      }
    });

    it('compactions show prints the summary, the range it covers and the diff from the previous summary', async () => {
      // Another agent's id reads as unknown: the default agent (main) has no compaction c2.
      const other = await keel(['compactions', 'show', 'c2'], env);
      expect(other.code).not.toBe(0);
      expect(other.stderr).toContain('no compaction c2 for agent main');
      expect(other.stderr).not.toContain('Goal: read files');
      const run = await keel(['compactions', 'show', 'c2', '--agent', 'ops'], env);
      expect(run.code).toBe(0);
      expect(run.stderr).toContain('Goal: read files\nDone: a and b');
      expect(run.stderr).toMatch(/first kept entry +u3/);
      // u2, a2, r2, r9: the entries from the previous first kept entry up to this one.
      expect(run.stderr).toMatch(/summarized +4 entries/);
      expect(run.stderr).toContain('9k → 1k');
      expect(run.stderr).toContain('changes since compaction c1');
      expect(run.stderr).toContain('  Goal: read files\n- Done: a\n+ Done: a and b');
      const json = JSON.parse((await keel(['compactions', 'show', 'c2', '--agent', 'ops', '--json'], env)).stdout);
      expect(json.detail).toMatchObject({
        summary: 'Goal: read files\nDone: a and b',
        previousCompactionId: 'c1',
        entriesSummarized: 4,
      });
    });

    it('doctor finds each planted fault, --fix repairs what is safe and says so, a second doctor is clean', async () => {
      const first = await keel(['doctor', '--json'], env);
      expect(first.code).toBe(1);
      const report = JSON.parse(first.stdout);
      const byCheck = (check: string) => report.findings.filter((f: { check: string }) => f.check === check);
      expect(
        byCheck('tool-pairing')
          .map((f: { detail: string; repair: string }) => [f.detail.match(/call-\w+/)![0], f.repair])
          .sort(),
      ).toEqual([
        ['call-lost', 'fixable'],
        ['call-nobody', 'read-time'],
      ]);
      expect(byCheck('parent-chain')).toEqual([
        expect.objectContaining({
          sessionId: 's1',
          repair: 'fixable',
          detail: expect.stringContaining('entry u3: parent vanished'),
        }),
      ]);
      expect(byCheck('counters')).toEqual([
        expect.objectContaining({
          detail: expect.stringContaining('compaction_count is 5 but the transcript holds 2'),
        }),
      ]);
      expect(byCheck('stuck-compaction')).toEqual([
        expect.objectContaining({ detail: expect.stringContaining('compaction c-stuck') }),
      ]);
      expect(byCheck('orphaned-rows')).toEqual([expect.objectContaining({ sessionId: 's0', sessionKey: null })]);
      expect(report.fixable).toBe(5);
      // No Temporal to ask (no TEMPORAL_ADDRESS, no running keel dev): that check is skipped, with why.
      expect(report.skipped).toEqual([
        expect.stringMatching(/^workflow-gone: .*no Temporal address \(set TEMPORAL_ADDRESS/),
      ]);

      const fix = await keel(['doctor', '--fix'], env);
      expect(fix.code).toBe(0);
      expect(fix.stderr).toContain('fixed 5');
      await withDb(async ({ db }) => {
        const appended = await db
          .selectFrom('transcript_entries')
          .selectAll()
          .where('session_id', '=', 's1')
          .where('id', '=', 'doctor-result-call-lost')
          .executeTakeFirstOrThrow();
        expect(appended.payload).toMatchObject({
          message: { role: 'toolResult', toolCallId: 'call-lost', isError: true },
        });
        const relinked = await db
          .selectFrom('transcript_entries')
          .select(['parent_id', 'payload'])
          .where('session_id', '=', 's1')
          .where('id', '=', 'u3')
          .executeTakeFirstOrThrow();
        expect(relinked.parent_id).toBe('r9');
        expect(relinked.payload).toMatchObject({ parentId: 'r9' });
        expect(
          (
            await db
              .selectFrom('sessions')
              .select('compaction_count')
              .where('agent_id', '=', 'ops')
              .executeTakeFirstOrThrow()
          ).compaction_count,
        ).toBe(2);
        expect(
          await db
            .selectFrom('compactions')
            .select(['status', 'error'])
            .where('id', '=', 'c-stuck')
            .executeTakeFirstOrThrow(),
        ).toMatchObject({ status: 'failed', error: expect.stringContaining('marked failed by keel doctor') });
        expect(await db.selectFrom('pending_tool_args').selectAll().execute()).toEqual([]);
      });

      const again = await keel(['doctor', '--json'], env);
      expect(again.code).toBe(0);
      const clean = JSON.parse(again.stdout);
      expect(clean.fixable).toBe(0);
      // Only the orphan result remains: append-only, and dropped from every context the model sees.
      expect(clean.findings.map((f: { repair: string }) => f.repair)).toEqual(['read-time']);

      // The stuck row is now a failed compaction an operator can retry.
      const failed = JSON.parse((await keel(['compactions', '--failed', '--json'], env)).stdout);
      expect(failed.compactions).toEqual([
        expect.objectContaining({
          id: 'c-stuck',
          status: 'failed',
          retryCommand: 'keel compactions retry c-stuck --agent ops',
        }),
      ]);
    });

    it('export reaches an earlier transcript of the key; errors name the session, the folder, and cut long keys', async () => {
      const old = await keel(['export', KEY, '--agent', 'ops', '--session-id', 's0'], env);
      expect(old.code).toBe(0);
      expect(old.stdout).toContain('before the reset');
      expect(old.stderr).toContain('of session id s0');

      const missing = join(home, 'no-such-folder', 'out.jsonl');
      const noFolder = await keel(['export', KEY, '--agent', 'ops', '--out', missing], env);
      expect(noFolder.code).toBe(2);
      expect(noFolder.stderr).toContain(`the folder ${join(home, 'no-such-folder')} does not exist; create it first`);

      const longKey = `agent:ops:${'x'.repeat(5000)}`;
      const unknown = await keel(['export', longKey, '--agent', 'ops'], env);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain(`(${longKey.length} chars)`);
      expect(unknown.stderr).toContain('for agent ops');
      expect(unknown.stderr).not.toContain('x'.repeat(200));

      // Unreachable services are named by their variable and the address tried (port 1: refused at once).
      const noTemporal = await keel(['status', KEY], { ...env, TEMPORAL_ADDRESS: '127.0.0.1:1' });
      expect(noTemporal.code).toBe(1);
      expect(noTemporal.stderr).toContain('cannot reach Temporal at 127.0.0.1:1 (TEMPORAL_ADDRESS)');
      const noDatabase = await keel(['sessions'], { ...env, DATABASE_URL: 'postgres://keel:secret@127.0.0.1:1/keel' });
      expect(noDatabase.code).toBe(1);
      expect(noDatabase.stderr).toContain(
        'cannot reach the database at postgres://keel:***@127.0.0.1:1/keel (DATABASE_URL)',
      );
      expect(noDatabase.stderr).not.toContain('secret');
    });

    it('export --all writes every transcript of the key, oldest first; with --out, one file per transcript in a folder', async () => {
      const all = await keel(['export', KEY, '--agent', 'ops', '--all'], env);
      expect(all.code).toBe(0);
      const headers = all.stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l))
        .filter((e: { type: string }) => e.type === 'session');
      expect(headers.map((h: { id: string }) => h.id)).toEqual(['s0', 'head']);
      expect(all.stdout.indexOf('before the reset')).toBeLessThan(all.stdout.indexOf('read the file'));
      expect(all.stderr).toContain('exported 2 transcripts');
      const folder = await mkdtemp(join(home, 'all-'));
      const written = await keel(['export', KEY, '--agent', 'ops', '--all', '--out', folder, '--json'], env);
      expect(written.code).toBe(0);
      expect(JSON.parse(written.stdout).transcripts).toEqual([
        expect.objectContaining({
          sessionId: 's0',
          current: false,
          endedAt: expect.any(String),
          entries: 1,
          file: join(folder, 's0.jsonl'),
        }),
        expect.objectContaining({ sessionId: 's1', current: true, endedAt: null, file: join(folder, 's1.jsonl') }),
      ]);
      expect(await readFile(join(folder, 's0.jsonl'), 'utf8')).toContain('before the reset');
    });

    it('maintenance runs in the configured mode (KEEL_MAINTENANCE_MODE); --warn overrides it', async () => {
      const enforced = await keel(['maintenance', '--json', '--prune-days', '0', '--max-sessions', '0'], {
        ...env,
        KEEL_MAINTENANCE_MODE: 'enforce',
      });
      expect(enforced.code).toBe(0);
      expect(JSON.parse(enforced.stdout).mode).toBe('enforce');
      // Enforce says what it is about to delete before it does.
      expect(enforced.stderr).toContain(
        'deleting: 0 sessions (0 not updated for the prune days, 0 beyond the per-agent count)',
      );
      const warned = await keel(['maintenance', '--warn', '--json', '--prune-days', '0', '--max-sessions', '0'], {
        ...env,
        KEEL_MAINTENANCE_MODE: 'enforce',
      });
      expect(JSON.parse(warned.stdout).mode).toBe('warn');
      expect(warned.stderr).not.toContain('deleting:');
      const bad = await keel(['maintenance'], { ...env, KEEL_MAINTENANCE_MODE: 'sometimes' });
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('KEEL_MAINTENANCE_MODE: use warn or enforce');
    });
  },
);
