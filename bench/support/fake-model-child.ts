/**
 * The child side of `fake-model-process.ts`: the strict fake model server answering every request
 * "ok", with its requests' own work reported over IPC. Run by `startFakeModelProcess`, not by hand.
 */
import { fakeReply, startFakeAnthropic } from '../../src/testing';
import type { FakeModelAnswer, FakeModelAsk } from './fake-model-process';

async function main(): Promise<void> {
  const fake = await startFakeAnthropic();
  fake.respondWith(() => fakeReply.text('ok'));
  // The largest request of each `take` batch, under the name the parent gave it.
  const kept = new Map<string, string>();
  let taken = 0;
  const answer = (message: FakeModelAnswer): void => void process.send!(message);
  process.on('message', (ask: FakeModelAsk) => {
    if (ask.kind === 'take') {
      const batch = fake.requests.slice(taken);
      taken = fake.requests.length;
      const largest = batch.reduce<(typeof batch)[number] | undefined>(
        (a, r) => (a && a.rawBody.length >= r.rawBody.length ? a : r),
        undefined,
      );
      if (largest) kept.set(ask.keep, largest.rawBody);
      answer({
        id: ask.id,
        kind: 'taken',
        requests: batch.map((r) => ({ fakeWorkMs: r.fakeWorkMs, bytes: r.rawBody.length })),
      });
    } else if (ask.kind === 'body') {
      answer({ id: ask.id, kind: 'body', rawBody: kept.get(ask.keep) ?? null });
    } else {
      void fake.close().then(() => process.exit(0));
    }
  });
  answer({ id: 0, kind: 'ready', url: fake.url });
}

main().catch((err: unknown) => {
  process.stderr.write(
    `fake model process failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
