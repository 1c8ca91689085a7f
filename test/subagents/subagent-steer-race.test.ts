/**
 * Steers racing a subagent's finish, on the real path: the parent spawns a `run` child through the
 * model, the steer goes the way the `sessions_send` tool and `keel subagents steer` send it
 * (`steerSubagent` → the child's `steer` Update), at seeded moments of the child's run: while its
 * first model call waits, while its last one does, right as that call answers, after it announced.
 * Each child must announce exactly once, with its task's answer and then each admitted steer's, in
 * order; a steer is refused only by a run that has ended, and a refused steer leaves no trace.
 * And from the moment a run exists: a kill or a steer sent 0, 10, 50 or 200 ms after the spawn keeps
 * what its reply promised (killed and announced so, taken and answered, or "not started yet").
 */
import { integrationSuite } from '../support/integration';
import { testDatabases } from '../support/databases';
import { waitUntil } from '../support/wait-until';
import { announcedSeed } from '../support/test-seed';
import { prng } from '../fixtures/generate';
import { allEntries } from '../support/store-readers';
import { PARENT_PROMPT, isChildRequest, lookupTools, messageText, subagentResponder } from './subagent-script';
import { announceTexts } from './announce-texts';
import { killSubagent, steerSubagent } from '../../src/subagents/control';
import { createSessionSignals } from '../../src/client/session-signals';
import { getSession } from '../../src/store/sessions-repo';
import { getSubagentRun } from '../../src/store/subagent-runs-repo';
import type { FakeRequest } from '../../src/testing';
import type { MessageEntry } from '../../src/context/types';
import type { Store } from '../../src/store/connect';

/**
 * Trials per database: 48 on the PostgreSQL server (each moment 12 times, a new seed every run), a
 * quick 16 on PGlite; SUBAGENT_STEER_REAL_TRIALS sets both. The 200-trial soak (two minutes) is in
 * bench/README.md.
 */
const trialsOn = (database: string): number =>
  Number(process.env.SUBAGENT_STEER_REAL_TRIALS ?? (database === 'postgres' ? 48 : 16));
const MOMENTS = [
  'while its first model call waits',
  'while its last model call waits',
  'as its last model call answers',
  'after it announced',
] as const;
type Moment = (typeof MOMENTS)[number];

/** Delays after a spawn at which the kill or steer is sent. */
const SPAWN_EDGE_DELAYS_MS = [0, 10, 50, 200];
/**
 * Spawn-edge trials per database (a multiple of 8: each delay, kill and steer): 24 on the
 * PostgreSQL server, 8 on PGlite; SUBAGENT_SPAWN_EDGE_TRIALS sets both.
 */
const spawnEdgeTrialsOn = (database: string): number =>
  Number(process.env.SUBAGENT_SPAWN_EDGE_TRIALS ?? (database === 'postgres' ? 24 : 8));

const suite = integrationSuite();

/** `promise`, or a failure naming `what` after `ms`: a hang says where it hung. */
async function within<T>(what: string, promise: Promise<T>, ms = 60_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer after ${ms} ms`)), ms)),
  );
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The user messages of a child's transcript, in order. */
async function childUserTexts(store: Store, childSessionKey: string): Promise<string[]> {
  const session = await getSession(store.db, 'main', childSessionKey);
  if (!session) return [];
  return (await allEntries(store.db, 'main', session.session_id))
    .map((row) => (row.payload as unknown as MessageEntry).message)
    .filter((m) => m?.role === 'user')
    .map((m) => messageText(m as { content: unknown }));
}

/** Where the child is, as its model calls reach the fake: each call can be held until the test lets it go. */
class ChildCalls {
  first = new Hold();
  last = new Hold();

  async pass(r: FakeRequest): Promise<void> {
    if (!isChildRequest(r) || messageText(r.body.messages![r.body.messages!.length - 1]).includes('steer:')) return;
    if (r.body.messages!.length === 1) await this.first.reached();
    if (r.body.messages!.length === 3) await this.last.reached();
  }
}

/** A call held until `release`; `arrived` resolves when the call reached it. */
class Hold {
  private open = false;
  private waiters: Array<() => void> = [];
  private arrivedResolve!: () => void;
  readonly arrived = new Promise<void>((resolve) => (this.arrivedResolve = resolve));

  async reached(): Promise<void> {
    this.arrivedResolve();
    if (!this.open) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    this.open = true;
    for (const w of this.waiters.splice(0)) w();
  }
}

describe.each(testDatabases())('steers racing a subagent finish on $name', (database) => {
  const db = suite.storePerTest(database);

  it(
    `announces each child once with its task's answer and its admitted steers' answers in order, over ${trialsOn(database.name)} seeded trials`,
    () =>
      suite.withWorker(db.store, { tools: lookupTools() }, async ({ client, fake, store, taskQueue }) => {
        const random = prng(announcedSeed('SUBAGENT_STEER_REAL_SEED', `steer races on ${database.name}`));
        const signals = createSessionSignals(client.temporal.connection, client.temporal.options.namespace, taskQueue);
        const base = subagentResponder({ cities: ['Oslo'] });
        let calls = new ChildCalls();
        fake.respondWith(async (r) => {
          await calls.pass(r);
          return base(r);
        });
        const outcomes: Record<Moment, { admitted: number; refused: number }> = Object.fromEntries(
          MOMENTS.map((m) => [m, { admitted: 0, refused: 0 }]),
        ) as never;

        const TRIALS = trialsOn(database.name);
        for (let trial = 0; trial < TRIALS; trial++) {
          calls = new ChildCalls();
          const moment: Moment = MOMENTS[trial % MOMENTS.length]!;
          const steerCount = 1 + Math.floor(random() * 2);
          // Right at the finish the window is a few milliseconds wide: a smaller jitter lands in it more often.
          const jitterMs = Math.floor(random() * (moment === 'as its last model call answers' ? 80 : 150));
          // One parent per database and trial: the other database's session workflows run on the same server.
          const parent = `agent:main:steer-race-${database.name}-${trial}`;
          const where = `trial ${trial} (${moment}, ${steerCount} steers, ${jitterMs} ms)`;
          const sent: Array<{ text: string; sent: boolean; message: string }> = [];
          const steerAll = async () => {
            for (let k = 1; k <= steerCount; k++) {
              const run = await store.db
                .selectFrom('subagent_runs')
                .selectAll()
                .where('parent_session_key', '=', parent)
                .executeTakeFirstOrThrow();
              const text = `steer: ${trial}-${k}`;
              const steered = steerSubagent(
                store.db,
                signals,
                (await getSubagentRun(store.db, 'main', run.id))!,
                text,
                `steer:race:${trial}:${k}`,
              );
              sent.push({ text, ...(await within(`${where}: steer ${k} of ${run.workflow_id}`, steered)) });
            }
          };

          if (moment === 'after it announced') {
            calls.first.release();
            calls.last.release();
            await within(`${where}: the parent's turn`, client.sendMessage(parent, PARENT_PROMPT));
            await waitUntil(`${where}: the announce`, async () => (await announceTexts(store, parent)).length === 1);
            await steerAll();
          } else {
            const held = moment === 'while its first model call waits' ? calls.first : calls.last;
            if (held === calls.last) calls.first.release();
            await within(`${where}: the parent's turn`, client.sendMessage(parent, PARENT_PROMPT));
            await within(`${where}: the held call`, held.arrived);
            if (moment === 'as its last model call answers') {
              // The steer leaves around the moment the answer is let go (up to 30 ms before, 50 ms after):
              // it lands before the answer settles, while the announce is out, or after the end.
              const offsetMs = jitterMs - 30;
              if (offsetMs > 0) calls.last.release();
              await new Promise((r) => setTimeout(r, Math.abs(offsetMs)));
              const steering = steerAll();
              if (offsetMs <= 0) {
                await new Promise((r) => setTimeout(r, -offsetMs));
                calls.last.release();
              }
              await within(`${where}: the steers`, steering);
            } else {
              await new Promise((r) => setTimeout(r, jitterMs));
              await steerAll();
            }
            calls.first.release();
            calls.last.release();
          }

          const run = await store.db
            .selectFrom('subagent_runs')
            .selectAll()
            .where('parent_session_key', '=', parent)
            .executeTakeFirstOrThrow();
          await waitUntil(
            `${where}: the child to close`,
            async () =>
              (await client.temporal.workflow.getHandle(run.workflow_id!).describe()).status.name === 'COMPLETED',
          );
          await waitUntil(`${where}: the parent to answer the announce`, async () => {
            const status = await client.getStatus(parent);
            return status.queuedTurns === 0 && status.turnsCompleted === 2;
          });

          // Exactly one announce, carrying the task's answer, then each admitted steer's, in order.
          const announces = await announceTexts(store, parent);
          expect({ where, announces: announces.length }).toEqual({ where, announces: 1 });
          const text = announces[0]!;
          const admitted = sent.filter((s) => s.sent).map((s) => s.text);
          const expected = ['Oslo has population 400000.', ...admitted.map((t) => `Oslo steered: ${t}`)];
          const positions = expected.map((part) => text.indexOf(part));
          expect({
            where,
            positions: positions.every((p, i) => p >= 0 && (i === 0 || p > positions[i - 1]!)),
            text,
          }).toEqual({ where, positions: true, text });
          for (const refused of sent.filter((s) => !s.sent)) {
            expect({ where, message: refused.message }).toEqual({
              where,
              message: expect.stringContaining('has ended'),
            });
            expect(text).not.toContain(refused.text);
          }
          // The child's transcript holds the task and exactly the admitted steers, in order.
          expect({ where, users: await childUserTexts(store, run.child_session_key) }).toEqual({
            where,
            users: ['Look up Oslo and report its population.', ...admitted],
          });
          // PostgreSQL: the run ended done, with one claimed announce keyed by its task.
          const row = (await getSubagentRun(store.db, 'main', run.id))!;
          expect({ where, status: row.status, ended: row.ended_at !== null }).toEqual({
            where,
            status: 'done',
            ended: true,
          });
          const claims = await store.db
            .selectFrom('subagent_announces')
            .select('announce_key')
            .where('subagent_id', '=', run.id)
            .execute();
          expect({ where, claims: claims.map((c) => c.announce_key) }).toEqual({ where, claims: [`task:${run.id}`] });
          for (const s of sent) outcomes[moment][s.sent ? 'admitted' : 'refused'] += 1;
        }

        // Held calls make two moments certain: a steer while the child works is taken, one after its announce refused.
        expect(outcomes['while its first model call waits']).toMatchObject({ refused: 0 });
        expect(outcomes['while its last model call waits']).toMatchObject({ refused: 0 });
        expect(outcomes['after it announced']).toMatchObject({ admitted: 0 });
        process.stdout.write(`steer races on ${database.name}: ${JSON.stringify(outcomes)}\n`);
      }),
    1_200_000,
  );

  it(
    `keeps the promise of each kill and steer sent 0, 10, 50 and 200 ms after a spawn, over ${spawnEdgeTrialsOn(database.name)} seeded trials`,
    () =>
      suite.withWorker(db.store, { tools: lookupTools() }, async ({ client, fake, store, taskQueue }) => {
        const random = prng(announcedSeed('SUBAGENT_SPAWN_EDGE_SEED', `spawn edges on ${database.name}`));
        const signals = createSessionSignals(client.temporal.connection, client.temporal.options.namespace, taskQueue);
        const base = subagentResponder({ cities: ['Oslo'] });
        // The child's first model call waits until the kill or steer has its answer: it is in flight or not started.
        let firstCall = new Hold();
        fake.respondWith(async (r) => {
          if (isChildRequest(r) && r.body.messages!.length === 1) await firstCall.reached();
          return base(r);
        });
        const plan = SPAWN_EDGE_DELAYS_MS.flatMap((delayMs) =>
          (['kill', 'steer'] as const).flatMap((action) =>
            Array.from({ length: spawnEdgeTrialsOn(database.name) / 8 }, () => ({ delayMs, action })),
          ),
        ).sort(() => random() - 0.5);
        const tally: Record<string, number> = {};

        for (const [trial, { delayMs, action }] of plan.entries()) {
          firstCall = new Hold();
          const parent = `agent:main:spawn-edge-${database.name}-${trial}`;
          const where = `trial ${trial} (${action} ${delayMs} ms after the spawn)`;
          const turn = client.sendMessage(parent, PARENT_PROMPT);
          turn.catch(() => undefined);
          // The moment the run exists: the operator's listing shows it from here on.
          const spawned = await waitUntil(
            `${where}: the run`,
            async () =>
              store.db
                .selectFrom('subagent_runs')
                .select('id')
                .where('parent_session_key', '=', parent)
                .executeTakeFirst(),
            60_000,
            1,
          );
          await new Promise((r) => setTimeout(r, delayMs));
          const run = (await getSubagentRun(store.db, 'main', spawned.id))!;
          const steerText = `steer: edge-${trial}`;
          const reply =
            action === 'kill'
              ? await within(`${where}: the kill`, killSubagent(store.db, signals, run))
              : await within(
                  `${where}: the steer`,
                  steerSubagent(store.db, signals, run, steerText, `steer:edge:${trial}`),
                );
          const promised = 'killed' in reply ? reply.killed : reply.sent;
          firstCall.release();
          await within(`${where}: the parent's turn`, turn);
          const announces = await waitUntil(`${where}: the announce`, async () => {
            const texts = await announceTexts(store, parent);
            return texts.length > 0 && texts;
          });
          await waitUntil(`${where}: the parent to answer the announce`, async () => {
            const status = await client.getStatus(parent);
            return status.queuedTurns === 0 && status.turnsCompleted === 2;
          });
          expect({ where, announces: announces.length }).toEqual({ where, announces: 1 });
          const text = announces[0]!;
          const ended = (await getSubagentRun(store.db, 'main', run.id))!;
          const childWorkflow = client.temporal.workflow.getHandle(`keel-session/main/${run.child_session_key}`);
          const closed = await waitUntil(`${where}: the child to close`, async () => {
            const status = (await childWorkflow.describe()).status.name;
            return status !== 'RUNNING' && status;
          });
          if (action === 'kill') {
            // Nothing had ended: every kill is taken, announced as killed, and no reply is the child's answer.
            expect({ where, reply }).toEqual({ where, reply: { killed: true, message: expect.any(String) } });
            expect({ where, closed, status: ended.status, killed: text.includes('was killed') }).toEqual({
              where,
              closed: 'CANCELLED',
              status: 'killed',
              killed: true,
            });
            expect(text).not.toContain('has population');
          } else if (promised) {
            expect({ where, closed, status: ended.status }).toEqual({ where, closed: 'COMPLETED', status: 'done' });
            const answer = text.indexOf('Oslo has population 400000.');
            expect({ where, answer: answer >= 0, steer: text.indexOf(`Oslo steered: ${steerText}`) > answer }).toEqual({
              where,
              answer: true,
              steer: true,
            });
          } else {
            // Refused only as not started yet (retry), never as ended; it leaves no trace.
            expect({ where, message: reply.message }).toEqual({
              where,
              message: expect.stringContaining('has not started yet'),
            });
            expect(text).toContain('Oslo has population 400000.');
            expect(text).not.toContain(steerText);
            expect(await childUserTexts(store, run.child_session_key)).not.toContain(steerText);
          }
          const key = `${action} at ${delayMs} ms: ${promised ? 'taken' : 'not started yet'}`;
          tally[key] = (tally[key] ?? 0) + 1;
        }
        process.stdout.write(`spawn edges on ${database.name}: ${JSON.stringify(tally)}\n`);
      }),
    1_200_000,
  );
});
