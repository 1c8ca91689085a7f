import { timeInterleaved, timeSequential } from '../../bench/support/stats';

describe('timeInterleaved', () => {
  it('takes out only the time an op reports as OutsideTime, never a plain result', async () => {
    const calls: string[] = [];
    const [fake, plain] = await timeInterleaved(
      [
        async (i) => (calls.push(`a${i}`), { outsideMs: 0.5 }),
        // A workflow result that happens to be a number is not outside time.
        async (i) => (calls.push(`b${i}`), 7),
      ],
      3,
      1,
    );
    expect(calls).toEqual(['a0', 'b0', 'a1', 'b1', 'a2', 'b2', 'a3', 'b3']);
    expect(fake!.timed).toHaveLength(3);
    fake!.timed.forEach((ms, k) => expect(fake!.own[k]).toBeCloseTo(ms - 0.5, 9));
    expect(plain!.own).toEqual(plain!.timed);
  });

  it("leaves the bench's own bookkeeping after a call out of both measures", async () => {
    // Each call "takes" 10 ms on a clock the test controls, 4 of them the bench asking its stand-in.
    let clock = 0;
    const now = jest.spyOn(performance, 'now').mockImplementation(() => clock);
    try {
      const op = async () => ((clock += 10), { outsideMs: 1, bookkeepingMs: 4 });
      const [series] = await timeInterleaved([op], 2, 0);
      expect(series!.timed).toEqual([6, 6]);
      expect(series!.own).toEqual([5, 5]);
      expect(await timeSequential(op, 2, 0)).toEqual([6, 6]);
    } finally {
      now.mockRestore();
    }
  });
});
