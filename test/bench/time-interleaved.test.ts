import { timeInterleaved } from '../../bench/support/stats';

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
});
