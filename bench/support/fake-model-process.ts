/**
 * The fake model server in a process of its own, as a provider is. In the bench's process its work
 * on a request (parsing ~490 KB of JSON, counting it, checking its tool pairing) was taken out of a
 * turn's time, but the garbage it left was collected during Keel's next steps: ~4.5 ms of a window
 * turn, measured with a `gc` PerformanceObserver, was the fake's and counted as Keel's.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

/** What the bench asks the child: the requests served since the last `take` (the largest kept under `keep`), a kept body, or to stop. */
export type FakeModelAsk =
  | { id: number; kind: 'take'; keep: string }
  | { id: number; kind: 'body'; keep: string }
  | { id: number; kind: 'close' };

/** The child's answers, by the ask's id (0: it is listening). */
export type FakeModelAnswer =
  | { id: number; kind: 'ready'; url: string }
  | { id: number; kind: 'taken'; requests: ServedRequest[] }
  | { id: number; kind: 'body'; rawBody: string | null };

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** One request the fake served: its own work on it (ms) and its size. */
export interface ServedRequest {
  readonly fakeWorkMs: number;
  readonly bytes: number;
}

export interface FakeModelProcess {
  readonly url: string;
  /** The requests served since the last call; the largest one's body is kept under `keep`. */
  take(keep: string): Promise<ServedRequest[]>;
  /** The raw body last kept under `keep`. */
  body(keep: string): Promise<string | undefined>;
  close(): Promise<void>;
}

/** Forks the fake (TypeScript, transpiled on load) and resolves once it listens. */
export async function startFakeModelProcess(): Promise<FakeModelProcess> {
  const child = fork(join(__dirname, 'fake-model-child.ts'), [], {
    execArgv: ['-r', 'ts-node/register'],
    env: { ...process.env, TS_NODE_TRANSPILE_ONLY: 'true' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waiting = new Map<number, (answer: FakeModelAnswer) => void>();
  child.on('message', (answer: FakeModelAnswer) => {
    waiting.get(answer.id)?.(answer);
    waiting.delete(answer.id);
  });
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`fake model process exited (${code})`))),
  );
  exited.catch(() => undefined);
  let next = 1;
  const ask = <K extends FakeModelAnswer['kind']>(
    question: DistributiveOmit<FakeModelAsk, 'id'>,
  ): Promise<Extract<FakeModelAnswer, { kind: K }>> => {
    const id = next++;
    const answered = new Promise<FakeModelAnswer>((resolve) => waiting.set(id, resolve));
    child.send({ ...question, id } as FakeModelAsk);
    return Promise.race([answered, exited]) as Promise<Extract<FakeModelAnswer, { kind: K }>>;
  };
  const ready = new Promise<FakeModelAnswer>((resolve) => waiting.set(0, resolve));
  const { url } = (await Promise.race([ready, exited])) as Extract<FakeModelAnswer, { kind: 'ready' }>;
  return {
    url,
    take: async (keep) => (await ask<'taken'>({ kind: 'take', keep })).requests,
    body: async (keep) => (await ask<'body'>({ kind: 'body', keep })).rawBody ?? undefined,
    close: () => closeChild(child),
  };
}

function closeChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.send({ id: -1, kind: 'close' });
  });
}
