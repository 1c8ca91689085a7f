import { sql } from 'kysely';
import { Client } from 'pg';
import { ApplicationFailure } from '@temporalio/common';
import { testDatabases } from '../support/databases';
import type { Store } from '../../src/store/connect';
import { classifyDbError, classifySqlState, dataFailure } from '../../src/store/db-errors';
import { withDataErrors } from '../../activities/parts/data-errors';
import { createActivities } from '../../activities';
import { testDeps } from '../support/keel-deps';
import { FailureTypes } from '../../src/protocol';

async function errorOf(work: () => Promise<unknown>): Promise<unknown> {
  try {
    await work();
  } catch (err) {
    return err;
  }
  throw new Error('expected the statement to fail');
}

describe('classifySqlState', () => {
  it.each([
    ['08006', 'transient'], // connection failure
    ['08P01', 'transient'],
    ['57P01', 'transient'], // admin shutdown
    ['57P02', 'transient'],
    ['57P03', 'transient'],
    ['40001', 'transient'], // serialization failure
    ['40P01', 'transient'], // deadlock
    ['53300', 'transient'], // too many connections
    ['22P05', 'permanent'], // untranslatable character
    ['22021', 'permanent'], // invalid byte sequence
    ['23505', 'permanent'], // unique violation
    ['42P01', 'permanent'], // undefined table
    ['55P03', 'unknown'], // lock not available: left to the retry policy
    ['57014', 'unknown'], // query cancelled
  ])('%s is %s', (code, kind) => {
    expect(classifySqlState(code)).toBe(kind);
  });
});

describe.each(testDatabases())('classifyDbError with real errors from $name', (database) => {
  let store: Store;
  beforeAll(async () => {
    store = await database.open();
    await sql`create table probe (id text primary key, body text, doc jsonb)`.execute(store.db);
  });
  afterAll(async () => store.close());

  it.each([
    [
      'NUL in a jsonb value',
      '22P05',
      () => sql`insert into probe (id, doc) values ('a', ${JSON.stringify({ t: 'x\u0000' })})`,
    ],
    ['NUL in a text column', '22021', () => sql`insert into probe (id, body) values ('b', ${'x\u0000y'})`],
    [
      'a lone surrogate in a jsonb value',
      '22P02',
      () => sql`insert into probe (id, doc) values ('c', ${JSON.stringify({ t: '\ud800' })})`,
    ],
    ['a duplicate primary key', '23505', () => sql`insert into probe (id) values ('dup'), ('dup')`],
    ['an undefined table', '42P01', () => sql`select * from no_such_table`],
  ])('%s (SQLSTATE %s) is permanent and becomes a non-retryable KeelDataError', async (_name, code, statement) => {
    const err = await errorOf(() => statement().execute(store.db));
    expect((err as { code?: string }).code).toBe(code);
    expect(classifyDbError(err)).toBe('permanent');
    const failure = dataFailure(err, 'activity probe')!;
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure.type).toBe(FailureTypes.DataError);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('activity probe');
    expect(failure.message).toContain(`SQLSTATE ${code}`);
  });

  it('names the table and constraint when the server reports them', async () => {
    await sql`insert into probe (id) values ('taken')`.execute(store.db);
    const err = await errorOf(() => sql`insert into probe (id) values ('taken')`.execute(store.db));
    expect(dataFailure(err, 'activity probe')!.message).toMatch(/table probe, constraint probe_pkey/);
  });
});

describe('classifyDbError with connection errors', () => {
  it('treats a refused connection as transient', async () => {
    const client = new Client({ connectionString: 'postgres://keel:keel@127.0.0.1:1/x' });
    const err = await errorOf(() => client.connect());
    expect((err as { code?: string }).code).toBe('ECONNREFUSED');
    expect(classifyDbError(err)).toBe('transient');
    expect(dataFailure(err, 'activity probe')).toBeUndefined();
  });

  it('treats "Connection terminated" and errors that wrap one as transient, and unrelated errors as unknown', () => {
    expect(classifyDbError(new Error('Connection terminated unexpectedly'))).toBe('transient');
    expect(
      classifyDbError(new Error('write failed', { cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) })),
    ).toBe('transient');
    expect(classifyDbError(new Error('boom'))).toBe('unknown');
    expect(classifyDbError(undefined)).toBe('unknown');
  });

  const url = process.env.TEST_DATABASE_URL;
  if (!url) console.log('db-errors: the 57P01 test needs a PostgreSQL server; set TEST_DATABASE_URL to run it');
  (url ? it : it.skip)(
    'treats a backend terminated by an administrator (57P01) as transient [PostgreSQL]',
    async () => {
      const victim = new Client({ connectionString: url });
      await victim.connect();
      const lost = new Promise<unknown>((resolve) => victim.on('error', resolve));
      const pid = (await victim.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      const admin = new Client({ connectionString: url });
      await admin.connect();
      await admin.query('select pg_terminate_backend($1)', [pid]);
      await admin.end();
      const err = await lost;
      expect((err as { code?: string }).code).toBe('57P01');
      expect(classifyDbError(err)).toBe('transient');
      const next = await errorOf(() => victim.query('select 1'));
      expect(classifyDbError(next)).toBe('transient');
    },
  );
});

describe('withDataErrors', () => {
  const dataError = Object.assign(new Error('unsupported Unicode escape sequence'), { code: '22P05' });
  const activities = withDataErrors({
    bad: async () => Promise.reject(dataError),
    flaky: async () => Promise.reject(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })),
    typed: async () => Promise.reject(ApplicationFailure.retryable('busy', 'Busy')),
    ok: async (n: number) => n + 1,
  });

  it('fails a permanent data error as a non-retryable KeelDataError naming the activity', async () => {
    const err = (await errorOf(() => activities.bad())) as ApplicationFailure;
    expect(err.type).toBe(FailureTypes.DataError);
    expect(err.nonRetryable).toBe(true);
    expect(err.message).toMatch(/^activity bad: .*SQLSTATE 22P05/);
  });

  it('rethrows transient errors and ApplicationFailures unchanged, and passes results through', async () => {
    expect(((await errorOf(() => activities.flaky())) as Error).message).toBe('read ECONNRESET');
    expect(((await errorOf(() => activities.typed())) as ApplicationFailure).type).toBe('Busy');
    expect(await activities.ok(1)).toBe(2);
  });
});

describe.each(testDatabases())('createActivities on $name', (database) => {
  let store: Store;
  beforeAll(async () => {
    store = await database.open();
  });
  afterAll(async () => store.close());

  it('fails a write the database rejects as bad data at once, as a non-retryable KeelDataError', async () => {
    const activities = createActivities(testDeps(store, 'http://127.0.0.1:9'));
    // A key is an identity and is not rewritten; NUL in it is a data error on every attempt.
    const err = (await errorOf(() =>
      activities.beginTurn({
        agentId: 'main',
        sessionKey: 'agent:main:bad\u0000key',
        userEntryId: 'u1',
        text: 'hi',
        now: new Date(0).toISOString(),
        newSessionId: 's1',
      }),
    )) as ApplicationFailure;
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({ type: FailureTypes.DataError, nonRetryable: true });
    expect(err.message).toMatch(/^activity beginTurn: the database rejected the data \(SQLSTATE 22021/);
  });
});
