import { groupToolBatches } from '../../src/compaction/tool-batches';
import { assistant, call, result, user } from './factories';

describe('groupToolBatches', () => {
  it('keeps an assistant tool call with its results', () => {
    const msgs = [user('a'), call(['c1', 'c2']), result('c1', 'r'), result('c2', 'r'), assistant('done')];
    expect(groupToolBatches(msgs)).toEqual([
      { start: 0, end: 1 },
      { start: 1, end: 4 },
      { start: 4, end: 5 },
    ]);
  });

  it('keeps a displaced user turn inside the batch it interrupts', () => {
    const msgs = [call(['c1', 'c2']), result('c1', 'r'), user('wait'), result('c2', 'r'), user('next')];
    expect(groupToolBatches(msgs)).toEqual([
      { start: 0, end: 4 },
      { start: 4, end: 5 },
    ]);
  });

  it('does not hold a batch open for a call with no result', () => {
    const msgs = [call(['c1'], 'aborted'), user('retry'), assistant('ok')];
    expect(groupToolBatches(msgs)).toEqual([
      { start: 0, end: 1 },
      { start: 1, end: 2 },
      { start: 2, end: 3 },
    ]);
  });

  it('attaches a stray result to the unit before it, so no unit starts with a result', () => {
    const msgs = [user('a'), result('zz', 'orphan'), assistant('b')];
    expect(groupToolBatches(msgs)).toEqual([
      { start: 0, end: 2 },
      { start: 2, end: 3 },
    ]);
  });
});
