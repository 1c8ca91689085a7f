import { CompactionBeside } from '../../workflows/background-compaction';
import { backgroundCompactionLine } from '../../src/compaction/background-line';
import type { CompactionWorkflowResult } from '../../src/protocol';

const started = { compactionId: 'c1', trigger: 'soft', startedAt: '2026-12-07T10:00:00.000Z' } as const;
const at = (seconds: number) => Date.parse(started.startedAt) + seconds * 1000;
const result: CompactionWorkflowResult = {
  compactionId: 'c1',
  status: 'succeeded',
  degraded: false,
  tokensBefore: 90_000,
  tokensAfter: 20_000,
  firstKeptEntryId: 'e7',
  entryId: 'c1',
};

describe('CompactionBeside', () => {
  it('holds one compaction until its own landing; a stray or repeated landing changes nothing', () => {
    const beside = new CompactionBeside();
    expect(beside.isRunning()).toBe(false);
    beside.started(started);
    expect(beside.landed({ compactionId: 'other', result })).toBe(false);
    expect(beside.isRunning()).toBe(true);
    expect(beside.landed({ compactionId: 'c1', result })).toBe(true);
    expect(beside.isRunning()).toBe(false);
    expect(beside.landed({ compactionId: 'c1', result })).toBe(false);
    expect(beside.takeLanded()).toEqual({ compactionId: 'c1', result });
    expect(beside.takeLanded()).toBeUndefined();
  });

  it('hands the running compaction on across continue-as-new, and nothing once it landed', () => {
    const beside = new CompactionBeside();
    beside.started(started);
    const next = new CompactionBeside(beside.carried().backgroundCompaction);
    expect(next.isRunning()).toBe(true);
    next.landed({ compactionId: 'c1', error: 'the summarizer failed' });
    expect(next.carried()).toEqual({});
  });

  it('reports how long it has run and how long a turn has waited for it', () => {
    const beside = new CompactionBeside();
    expect(beside.status(at(5))).toEqual({});
    beside.waiting(at(1)); // nothing runs: nothing to wait for
    beside.started(started);
    expect(beside.status(at(12))).toEqual({ backgroundCompaction: { ...started, runningMs: 12_000 } });
    beside.waiting(at(9));
    expect(beside.status(at(12)).backgroundCompaction?.turnWaitingMs).toBe(3_000);
    beside.landed({ compactionId: 'c1', result });
    expect(beside.status(at(13))).toEqual({});
  });
});

describe('backgroundCompactionLine', () => {
  it('says the turns go on, or that the next turn waits and why', () => {
    expect(backgroundCompactionLine({ trigger: 'soft', runningMs: 12_400 })).toBe(
      'compacting: 12 s (soft, in the background) · turns go on meanwhile',
    );
    expect(backgroundCompactionLine({ trigger: 'soft', runningMs: 12_400, turnWaitingMs: 3_000 })).toBe(
      'compacting: 12 s (soft, in the background) · the context reached its limit: the next turn waits for the summary',
    );
  });
});
