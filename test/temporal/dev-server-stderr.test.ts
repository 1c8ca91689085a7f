import { StderrKeeper } from '../../src/temporal/dev-server';

/** The shape of the CLI's bind failure: the reason first, then a long goroutine dump. */
const reason = 'panic: listen tcp 127.0.0.1:41234: bind: address already in use\n';
const dump = Array.from(
  { length: 400 },
  (_, i) => `go.uber.org/dig.(*constructorNode).Call(0x1657264b66c0) frame ${i}\n`,
).join('');

describe('the dev server stderr kept for the port-race retry and the error message', () => {
  it('sees a bind failure whose reason scrolled out of the tail, and keeps both ends for the message', () => {
    const kept = new StderrKeeper();
    kept.add(reason);
    for (let i = 0; i < dump.length; i += 1_000) kept.add(dump.slice(i, i + 1_000));
    expect(kept.portInUse).toBe(true);
    const text = kept.text();
    expect(text.startsWith(reason)).toBe(true);
    expect(text).toContain('frame 399');
    expect(text).toContain('\n…\n');
    expect(text.length).toBeLessThan(8_100);
  });

  it('sees the words split across two chunks', () => {
    const kept = new StderrKeeper();
    kept.add('bind: address already');
    kept.add(' in use\n');
    expect(kept.portInUse).toBe(true);
  });

  it('does not call another failure a port race, and returns short output whole', () => {
    const kept = new StderrKeeper();
    kept.add('Error: unable to open database file\n');
    expect(kept.portInUse).toBe(false);
    expect(kept.text()).toBe('Error: unable to open database file\n');
  });
});
