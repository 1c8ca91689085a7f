import { ApprovalBook, checkApprovalDecision } from '../../workflows/approval-book';

const pending = { approvalId: 'a1', toolName: 'pay', toolCallId: 'toolu_1', deadline: '2026-11-30T00:00:00.000Z' };

describe('ApprovalBook', () => {
  it('settles a waiting call with its first decision and answers a second with it', () => {
    const book = new ApprovalBook();
    book.open(pending);
    expect(book.pending()).toEqual([pending]);
    const first = book.decide({ approvalId: 'a1', decision: 'approve', by: 'ann', note: 'ok' }, 't1');
    expect(first).toEqual({ approvalId: 'a1', status: 'approved', decidedBy: 'ann', note: 'ok', decidedAt: 't1' });
    expect(book.decide({ approvalId: 'a1', decision: 'deny', reason: 'no' }, 't2')).toBe(first);
    expect(book.timedOut('a1', 't3')).toBe(first);
    expect(book.pending()).toEqual([]);
  });

  it('denies a call whose deadline passed as "timed out", and nothing else after', () => {
    const book = new ApprovalBook();
    book.open(pending);
    const timedOut = book.timedOut('a1', 't1');
    expect(timedOut).toEqual({ approvalId: 'a1', status: 'denied', reason: 'timed out', decidedAt: 't1' });
    expect(book.decide({ approvalId: 'a1', decision: 'approve' }, 't2')).toBe(timedOut);
  });

  it('knows nothing of a call it never waited for', () => {
    expect(new ApprovalBook().decide({ approvalId: 'zz', decision: 'approve' }, 't')).toBeUndefined();
  });

  it('keeps a note with an approval only, and a reason with a denial only', () => {
    const book = new ApprovalBook();
    book.open(pending);
    expect(book.decide({ approvalId: 'a1', decision: 'deny', note: 'n', reason: 'r' }, 't')).toEqual({
      approvalId: 'a1',
      status: 'denied',
      reason: 'r',
      decidedAt: 't',
    });
  });
});

describe('checkApprovalDecision', () => {
  it.each([
    [{ approvalId: '', decision: 'approve' }, /approvalId/],
    [{ approvalId: 'a', decision: 'maybe' }, /decision/],
    [{ approvalId: 'a', decision: 'deny', reason: 7 }, /reason/],
  ])('refuses %j', (decision, message) => {
    expect(() => checkApprovalDecision(decision as never)).toThrow(message);
  });
});
