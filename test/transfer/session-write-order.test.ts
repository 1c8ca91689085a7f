import { SessionWriteOrder } from '../../src/transfer/session-write-order';

/** Whether a promise settled by now (after pending callbacks ran). */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true));
  await new Promise((r) => setImmediate(r));
  return done;
}

describe('SessionWriteOrder', () => {
  it('lets files of different sessions write at once and holds a file until the earlier files of its session are done', async () => {
    const order = new SessionWriteOrder();
    const [a1, b1, a2] = [order.nextFile(), order.nextFile(), order.nextFile()];
    expect(await settled(a1.wait('a'))).toBe(true);
    expect(await settled(b1.wait('b'))).toBe(true);
    const a2Writes = a2.wait('a');
    expect(await settled(a2Writes)).toBe(false);
    b1.done();
    expect(await settled(a2Writes)).toBe(false);
    a1.done();
    expect(await settled(a2Writes)).toBe(true);
  });

  it('keeps file order when a later file of a session learns its session first', async () => {
    const order = new SessionWriteOrder();
    const [first, second] = [order.nextFile(), order.nextFile()];
    // The second file read its header first: it still waits for the first file to take its place.
    const secondWrites = second.wait('s');
    expect(await settled(secondWrites)).toBe(false);
    expect(await settled(first.wait('s'))).toBe(true);
    expect(await settled(secondWrites)).toBe(false);
    first.done();
    expect(await settled(secondWrites)).toBe(true);
  });

  it('lets the next files go on when a file gives up before it knew its session', async () => {
    const order = new SessionWriteOrder();
    const [broken, next] = [order.nextFile(), order.nextFile()];
    const nextWrites = next.wait('s');
    expect(await settled(nextWrites)).toBe(false);
    broken.done();
    expect(await settled(nextWrites)).toBe(true);
  });

  it('refuses a second wait for one file', async () => {
    const turn = new SessionWriteOrder().nextFile();
    await turn.wait('s');
    await expect(turn.wait('s')).rejects.toThrow('once');
  });
});
