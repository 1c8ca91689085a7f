import { openStore, type Store } from '../../src/store/connect';
import { memoryPglite } from '../support/databases';
import { parseReplyChunk, replyChannel, type ReplyChunk } from '../../src/streaming/reply-channel';
import { ReplyPublisher } from '../../src/streaming/reply-publisher';
import { PgliteReplyStreamSubscriber } from '../../src/embedded/pglite-reply-subscriber';

const ids = { agentId: 'main', sessionKey: 'agent:main:main', requestId: 'req-1' };

describe('ReplyPublisher over PGlite NOTIFY', () => {
  let store: Store;
  beforeEach(async () => {
    store = await openStore(memoryPglite());
  });
  afterEach(async () => store.close());

  it('sends a reply far over the 8000-byte NOTIFY limit as numbered chunks that add up to it', async () => {
    const received: ReplyChunk[] = [];
    const stop = await new PgliteReplyStreamSubscriber(store.pglite!).listen(replyChannel(ids), (p) =>
      received.push(parseReplyChunk(p)!),
    );
    const publisher = new ReplyPublisher(store.db, { ...ids, call: 'entry-1', attempt: 1, warn: () => {} });
    const reply = `Start ${'ünïcödé 🙂 '.repeat(3000)}end`;
    for (const word of reply.match(/.{1,500}/gsu)!) publisher.push(word);
    await publisher.finish();
    await stop();

    expect(received.map((c) => c.seq)).toEqual(received.map((_, i) => i));
    expect(received.map((c) => c.text).join('')).toBe(reply);
    expect(received.at(-1)!.end).toBe(true);
    expect(received.every((c) => c.call === 'entry-1' && c.attempt === 1)).toBe(true);
  });

  it('never fails the model call when NOTIFY fails: it warns once and finishes', async () => {
    const warnings: string[] = [];
    await store.db.destroy();
    const publisher = new ReplyPublisher(store.db, {
      ...ids,
      call: 'entry-1',
      attempt: 1,
      warn: (m) => warnings.push(m),
    });
    expect(() => publisher.push('Hello')).not.toThrow();
    await expect(publisher.finish()).resolves.toBeUndefined();
    expect(warnings).toEqual(['reply streaming failed; the turn goes on and its reply arrives whole']);
  });
});
