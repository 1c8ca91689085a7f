import { testDatabases } from '../support/databases';
import { compactionsList, compactionsShow, tokensBar } from '../../src/cli/compactions';
import { CompactionNotFoundError } from '../../src/operations/errors';
import { createCompactionRow, markFailed, markSucceeded } from '../../src/store/compactions-repo';
import { CompactionHooks } from '../../src/compaction/hooks';
import type { Store } from '../../src/store/connect';

describe('tokensBar', () => {
  it.each([
    [182_000, 24_000, '182k → 24k [███░░░░░░░░░░░░░░░░░] −87%'],
    [1_000, 1_000, '1k → 1k [████████████████████] −0%'],
    [500, null, '500 → ?'],
    [null, null, '—'],
  ])('draws %p → %p as %p', (before, after, expected) => {
    expect(tokensBar(before, after)).toBe(expected);
  });
});

describe('CompactionHooks', () => {
  it('runs every hook once and reports a throwing hook instead of failing', async () => {
    const seen: string[] = [];
    const hooks = new CompactionHooks()
      .on('before_compaction', () => {
        throw new Error('audit down');
      })
      .on('before_compaction', (e) => void seen.push(e.compactionId));
    const errors = await hooks.emit('before_compaction', {
      agentId: 'a',
      sessionKey: 'k',
      sessionId: 's',
      compactionId: 'c1',
      trigger: 'manual',
    });
    expect(seen).toEqual(['c1']);
    expect(errors.map((e) => [e.hook, String(e.error)])).toEqual([['before_compaction', 'Error: audit down']]);
  });
});

describe.each(testDatabases())('compactions CLI functions on $name', (database) => {
  let store: Store;
  beforeEach(async () => {
    store = await database.open();
  });
  afterEach(async () => {
    await store.close();
  });

  const row = (id: string, now: Date) => ({
    id,
    agentId: 'ops',
    sessionKey: 'agent:ops:main',
    sessionId: 's1',
    trigger: 'threshold',
    workflowId: `keel-compaction/ops/agent:ops:main`,
    retryOf: null,
    now,
    countAttempt: true,
  });

  it('lists newest first, --failed keeps failed and degraded rows, and people-text names the error', async () => {
    await createCompactionRow(store.db, row('ok', new Date('2026-01-01T10:00:00Z')));
    await markSucceeded(store.db, {
      agentId: 'ops',
      id: 'ok',
      status: 'succeeded',
      degraded: false,
      tokensBefore: 100_000,
      tokensAfter: 20_000,
      firstKeptEntryId: 'm9',
      entryId: 'ok',
      now: new Date(),
    });
    await createCompactionRow(store.db, row('bad', new Date('2026-01-01T11:00:00Z')));
    await markFailed(store.db, 'ops', 'bad', 'summarization_failed: model down', new Date());
    await createCompactionRow(store.db, row('weak', new Date('2026-01-01T12:00:00Z')));
    await markSucceeded(store.db, {
      agentId: 'ops',
      id: 'weak',
      status: 'succeeded',
      degraded: true,
      tokensBefore: 100_000,
      tokensAfter: 30_000,
      firstKeptEntryId: 'm9',
      entryId: 'weak',
      now: new Date(),
    });

    const all = await compactionsList({ db: store.db, json: true });
    expect(all.compactions.map((c) => c.id)).toEqual(['weak', 'bad', 'ok']);
    let text = '';
    const failed = await compactionsList({ db: store.db, failed: true, write: (t) => void (text += t) });
    expect(failed.compactions.map((c) => c.id)).toEqual(['weak', 'bad']);
    expect(text).toContain('error: summarization_failed: model down');
    expect(text).toContain('succeeded (degraded)');
  });

  it('shows one row with its tokens bar, and names the fix for an unknown id', async () => {
    await createCompactionRow(store.db, row('ok', new Date()));
    await markSucceeded(store.db, {
      agentId: 'ops',
      id: 'ok',
      status: 'succeeded',
      degraded: false,
      tokensBefore: 10_000,
      tokensAfter: 5_000,
      firstKeptEntryId: 'm9',
      entryId: 'ok',
      now: new Date(),
    });
    let text = '';
    const shown = await compactionsShow({ db: store.db, agentId: 'ops', id: 'ok', write: (t) => void (text += t) });
    expect(shown.compaction).toMatchObject({
      status: 'succeeded',
      tokensBefore: 10_000,
      tokensAfter: 5_000,
      attempts: 1,
    });
    expect(text).toContain('10k → 5k');
    await expect(compactionsShow({ db: store.db, agentId: 'ops', id: 'nope', json: true })).rejects.toBeInstanceOf(
      CompactionNotFoundError,
    );
  });

  it('counts a failed row once on its session, however often it is marked', async () => {
    await store.db
      .insertInto('sessions')
      .values({
        agent_id: 'ops',
        session_key: 'agent:ops:main',
        session_id: 's1',
        session_started_at: new Date(),
        last_interaction_at: new Date(),
        updated_at: new Date(),
        chat_type: null,
        channel: null,
        label: null,
        display_name: null,
        delivery: null,
        model_override: null,
        provider_override: null,
        auth_profile_override: null,
        toggles: '{}',
        memory_flush_at: null,
        memory_flush_compaction_count: null,
      })
      .execute();
    await createCompactionRow(store.db, row('bad', new Date()));
    // A provider's error quoting a key is stored redacted; another agent's id changes nothing.
    const key = `sk-ant-api03-${'Q7x'.repeat(14)}`;
    expect(await markFailed(store.db, 'intruder', 'bad', 'boom', new Date())).toBe(false);
    expect(await markFailed(store.db, 'ops', 'bad', `boom: invalid x-api-key ${key}`, new Date())).toBe(true);
    expect(await markFailed(store.db, 'ops', 'bad', 'boom', new Date())).toBe(false);
    expect(
      (await store.db.selectFrom('compactions').select('error').where('id', '=', 'bad').executeTakeFirstOrThrow())
        .error,
    ).toBe('boom: invalid x-api-key [REDACTED:anthropic_key]');
    const session = await store.db.selectFrom('sessions').select('compaction_failures').executeTakeFirstOrThrow();
    expect(session.compaction_failures).toBe(1);
  });
});
