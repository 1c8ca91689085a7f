import { AdmissionLine } from '../../src/client/admission-line';

/** Settles pending promise callbacks. */
const flush = () => new Promise((r) => setImmediate(r));

describe('AdmissionLine', () => {
  it('lets a send go only after every earlier send of the session was admitted, in the order they joined', async () => {
    const line = new AdmissionLine();
    const places = [0, 1, 2].map(() => line.join('wf-a'));
    const ready: number[] = [];
    places.forEach((p, i) => void p.ready.then(() => ready.push(i)));
    await flush();
    expect(ready).toEqual([0]);
    // The third is not let go by the second's admission while the first is still out.
    places[1]!.admitted();
    await flush();
    expect(ready).toEqual([0]);
    places[0]!.admitted();
    await flush();
    expect(ready).toEqual([0, 1, 2]);
  });

  it('says a send is alone only when nothing of this client to that session is out, and keeps sessions apart', () => {
    const line = new AdmissionLine();
    const first = line.join('wf-a');
    expect(first.alone).toBe(true);
    // Admitted but still waiting for its outcome: the next is not alone.
    first.admitted();
    expect(line.join('wf-a').alone).toBe(false);
    expect(line.join('wf-b').alone).toBe(true);
  });

  it('tells a send when every earlier send is over, so it asks for its outcome after theirs', async () => {
    const line = new AdmissionLine();
    const [first, second, third] = [0, 1, 2].map(() => line.join('wf-a'));
    const over: number[] = [];
    void second!.earlierOver.then(() => over.push(1));
    void third!.earlierOver.then(() => over.push(2));
    first!.admitted();
    second!.leave();
    await flush();
    // Admitted is not over; the second leaving does not let the third ask while the first is out.
    expect(over).toEqual([]);
    first!.leave();
    await flush();
    expect(over).toEqual([1, 2]);
  });

  it('lets the next send go when one fails before it was admitted', async () => {
    const line = new AdmissionLine();
    const failing = line.join('wf-a');
    const next = line.join('wf-a');
    let went = false;
    void next.ready.then(() => (went = true));
    failing.leave();
    await flush();
    expect(went).toBe(true);
    next.leave();
    expect(line.join('wf-a').alone).toBe(true);
  });
});
