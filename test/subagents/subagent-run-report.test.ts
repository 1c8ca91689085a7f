/**
 * The decisions a subagent's session makes about announcing, as the session workflow makes them
 * (`SessionState` for the queue, `SubagentRunReport` for what is owed), driven through seeded
 * interleavings of steers against the child's run: a steer lands before a turn, during it, as it
 * settles, while the announce is on its way, after the end; sometimes a kill lands too. Every run
 * must announce exactly once, with the task's answer first and each admitted steer's after it in
 * order; a steer is refused only once the run has ended.
 */
import { SessionState } from '../../workflows/session-state';
import { SubagentRunReport } from '../../workflows/subagent-run-report';
import { prng } from '../fixtures/generate';
import { announcedSeed } from '../support/test-seed';
import type { SubagentAnswer, TurnResult } from '../../src/protocol';

const TRIALS = Number(process.env.SUBAGENT_STEER_TRIALS ?? 1_000);

interface Announcement {
  readonly answers: readonly SubagentAnswer[];
  readonly killed: boolean;
}

interface Trial {
  readonly announcements: Announcement[];
  /** Request ids in the order the child settled them. */
  readonly settled: string[];
  /** Steer ids in the order the child admitted them. */
  readonly admitted: string[];
  readonly refused: Array<{ id: string; whileWorking: boolean }>;
  readonly mode: 'run' | 'session';
  killed: boolean;
}

/** A settled turn: its reply entry is named after its request. */
function done(requestId: string): { status: 'done'; turn: TurnResult } {
  return {
    status: 'done',
    turn: {
      reply: 'r',
      silent: false,
      userEntryId: `u:${requestId}`,
      assistantEntryId: `reply:${requestId}`,
      turn: 1,
      usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
      modelCalls: 1,
    },
  };
}

/**
 * One child: its task, up to five steers arriving at random steps, turns and announces that take a
 * random number of steps, the workflow's loop as `sessionWorkflow` runs it, and sometimes a kill.
 */
function runTrial(random: () => number): Trial {
  const pick = (n: number) => Math.floor(random() * n);
  const mode = random() < 0.7 ? 'run' : 'session';
  const state = new SessionState({ agentId: 'a', sessionKey: 'agent:a:subagent:x' });
  const report = new SubagentRunReport();
  state.admit({ requestId: 'task:x', turn: { text: 'the task' } });
  const trial: Trial = { announcements: [], settled: [], admitted: [], refused: [], mode, killed: false };
  const steers = Array.from({ length: pick(6) }, (_, i) => `steer:${i}`);
  const waiting: string[] = [];
  type Phase =
    | { kind: 'idle' }
    | { kind: 'turn'; requestId: string; steps: number }
    | { kind: 'announcing'; answers: readonly SubagentAnswer[]; steps: number }
    | { kind: 'closed' };
  let workflow = { kind: 'idle' } as Phase;
  // Read through a call: `close()` changes the phase behind the compiler's narrowing.
  const closed = () => workflow.kind === 'closed';
  let killAt = random() < 0.2 ? pick(30) : -1;

  // A refusal is wrong when the run still works on its answers (a kill aside).
  const refuse = (id: string) =>
    trial.refused.push({ id, whileWorking: !trial.killed && report.steerVerdict() === 'admit' });
  const steerArrives = (id: string) => {
    if (workflow.kind === 'closed') return refuse(id);
    const verdict = report.steerVerdict();
    if (verdict === 'admit') {
      state.admit({ requestId: id, turn: { text: id } });
      trial.admitted.push(id);
    } else if (verdict === 'wait') waiting.push(id);
    else refuse(id);
  };
  const close = () => {
    // What sessionWorkflow does after an ended run's loop: queued requests are answered, never run.
    if (report.ended) state.refuseQueued({ status: 'failed', type: 'x', message: 'ended' });
    workflow = { kind: 'closed' };
    for (const id of waiting.splice(0)) refuse(id);
  };

  for (let step = 0; step < 400; step++) {
    if (step === killAt && !closed()) {
      // A kill waits for an announce under way, then tells what is left, unless the run already ended.
      if (workflow.kind === 'announcing') {
        killAt++;
      } else {
        trial.killed = true;
        if (!report.ended) trial.announcements.push({ answers: report.pending(), killed: true });
        close();
        continue;
      }
    }
    if (steers.length > 0 && random() < 0.35) {
      steerArrives(steers.shift()!);
      continue;
    }
    if (workflow.kind === 'idle') {
      if (state.hasWork()) {
        const job = state.next()!;
        if (job.kind !== 'request') throw new Error('no maintenance in this simulation');
        workflow = { kind: 'turn', requestId: job.request.requestId, steps: 1 + pick(4) };
      } else if (report.ended || (steers.length === 0 && waiting.length === 0)) {
        close();
      }
    } else if (workflow.kind === 'turn') {
      if (--workflow.steps > 0) continue;
      const { requestId } = workflow;
      state.settle(requestId, done(requestId));
      state.jobDone();
      trial.settled.push(requestId);
      const answers = report.answered(requestId, done(requestId), state.hasQueuedRequests());
      workflow = answers ? { kind: 'announcing', answers, steps: 1 + pick(3) } : { kind: 'idle' };
    } else if (workflow.kind === 'announcing') {
      if (--workflow.steps > 0) continue;
      trial.announcements.push({ answers: workflow.answers, killed: false });
      report.announced(mode === 'run');
      workflow = { kind: 'idle' };
      // Steers held during the announce: admitted into a new run, or refused by an ended one.
      for (const id of waiting.splice(0)) steerArrives(id);
    } else {
      // Closed: steers still to come are refused by the closed workflow.
      if (steers.length === 0) break;
    }
  }
  while (steers.length > 0) steerArrives(steers.shift()!);
  if (!closed()) throw new Error(`trial did not finish: ${workflow.kind}`);
  return trial;
}

describe('SubagentRunReport', () => {
  it('announces the task alone when nothing else arrives', () => {
    const report = new SubagentRunReport();
    expect(report.answered('task:x', done('task:x'), false)).toEqual([
      { key: 'task:x', outcome: 'done', replyEntryId: 'reply:task:x' },
    ]);
    expect(report.steerVerdict()).toBe('wait');
    report.announced(true);
    expect(report.steerVerdict()).toBe('refuse');
  });

  it('holds the task answer while a steer is queued, then announces both in order', () => {
    const report = new SubagentRunReport();
    expect(report.answered('task:x', done('task:x'), true)).toBeUndefined();
    expect(report.steerVerdict()).toBe('admit');
    expect(report.answered('steer:1', { status: 'failed', type: 'T', message: 'model down' }, false)).toEqual([
      { key: 'task:x', outcome: 'done', replyEntryId: 'reply:task:x' },
      { key: 'steer:1', outcome: 'failed', error: 'model down' },
    ]);
  });

  it('starts a new run after the announce of a session child, and carries unannounced answers', () => {
    const report = new SubagentRunReport([{ key: 'task:x', outcome: 'done', replyEntryId: 'e1' }]);
    expect(report.answered('steer:1', done('steer:1'), false)?.map((a) => a.key)).toEqual(['task:x', 'steer:1']);
    report.announced(false);
    expect(report.steerVerdict()).toBe('admit');
    expect(report.pending()).toEqual([]);
  });

  it('refuses to answer once ended: the session ran a request it should have refused', () => {
    const report = new SubagentRunReport();
    report.answered('task:x', done('task:x'), false);
    report.announced(true);
    expect(() => report.answered('steer:1', done('steer:1'), false)).toThrow('while ended');
  });

  it(`announces every run exactly once, task first and steers in order, over ${TRIALS} seeded interleavings`, () => {
    const seed = announcedSeed('SUBAGENT_STEER_SEED', 'subagent steer races');
    const random = prng(seed);
    const seen = { steered: 0, refused: 0, heldThenAdmitted: 0, killed: 0 };
    for (let i = 0; i < TRIALS; i++) {
      const t = runTrial(random);
      const where = `trial ${i} (seed ${seed}, mode ${t.mode}${t.killed ? ', killed' : ''})`;
      const announcedKeys = t.announcements.flatMap((a) => a.answers.map((x) => x.key));
      // Every settled answer is announced once, in the order the child gave it.
      expect({ where, keys: announcedKeys }).toEqual({ where, keys: t.settled });
      expect({
        where,
        replies: t.announcements.flatMap((a) =>
          a.answers.map((x) => (x.outcome === 'done' ? x.replyEntryId : x.error)),
        ),
      }).toEqual({
        where,
        replies: t.settled.map((id) => `reply:${id}`),
      });
      // Steers are answered in the order they were admitted; the task's answer comes first.
      const answeredSteers = t.settled.filter((k) => k.startsWith('steer:'));
      expect({ where, steers: answeredSteers }).toEqual({
        where,
        steers: t.killed ? t.admitted.slice(0, answeredSteers.length) : t.admitted,
      });
      if (t.settled.length > 0) expect({ where, first: t.settled[0] }).toEqual({ where, first: 'task:x' });
      // One announce per run: a run child announces once, a kill included; each announce of a session child has answers.
      if (t.mode === 'run')
        expect({ where, announcements: t.announcements.length }).toEqual({ where, announcements: 1 });
      for (const a of t.announcements) if (!a.killed) expect(a.answers.length).toBeGreaterThan(0);
      // Refused only once the run is over: a session child that was not killed refuses nothing.
      if (t.mode === 'session' && !t.killed) expect({ where, refused: t.refused }).toEqual({ where, refused: [] });
      expect({ where, refusedWhileWorking: t.refused.filter((r) => r.whileWorking) }).toEqual({
        where,
        refusedWhileWorking: [],
      });
      seen.steered += t.admitted.length;
      seen.refused += t.refused.length;
      seen.killed += t.killed ? 1 : 0;
      seen.heldThenAdmitted += t.announcements.length > 1 ? 1 : 0;
    }
    // The interleavings covered what they are for.
    expect(seen.steered).toBeGreaterThan(0);
    expect(seen.refused).toBeGreaterThan(0);
    expect(seen.killed).toBeGreaterThan(0);
    expect(seen.heldThenAdmitted).toBeGreaterThan(0);
  });
});
