import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { sampleThreadCpu } from '../../bench/support/process-cpu';

/**
 * The fleet bench splits a worker's CPU by thread. A child process that spins one thread at a time
 * (on a signal from this test) shows where each spin lands: a worker thread's under `node`, the main
 * thread's under `main`. Compared with each other, not with a duration, so a loaded machine only
 * makes both smaller.
 */
const CHILD = `
const { Worker } = require('node:worker_threads');
const spin = (ms) => { const end = Date.now() + ms; while (Date.now() < end); };
const worker = new Worker("require('node:worker_threads').parentPort.on('message', (ms) => { const end = Date.now() + ms; while (Date.now() < end); require('node:worker_threads').parentPort.postMessage('done'); })", { eval: true });
worker.on('message', () => process.stdout.write('done\\n'));
process.stdin.on('data', (d) => { const [where, ms] = String(d).trim().split(' '); if (where === 'main') { spin(Number(ms)); process.stdout.write('done\\n'); } else worker.postMessage(Number(ms)); });
worker.on('online', () => process.stdout.write('ready\\n'));
`;

/** Resolves once the child has printed `line` since the last call (the stream stays open). */
function lineReader(child: ChildProcess): (line: string) => Promise<void> {
  let seen = '';
  let waiting: { line: string; resolve: () => void } | undefined;
  const check = () => {
    if (waiting && seen.includes(waiting.line)) {
      seen = seen.slice(seen.indexOf(waiting.line) + waiting.line.length);
      const { resolve } = waiting;
      waiting = undefined;
      resolve();
    }
  };
  child.stdout!.on('data', (chunk) => {
    seen += String(chunk);
    check();
  });
  return (line) =>
    new Promise<void>((resolve) => {
      waiting = { line, resolve };
      check();
    });
}

describe('sampleThreadCpu', () => {
  let child: ChildProcess;
  let nextLine: (line: string) => Promise<void>;
  beforeAll(async () => {
    child = spawn(process.execPath, ['-e', CHILD], { stdio: ['pipe', 'pipe', 'inherit'] });
    nextLine = lineReader(child);
    await nextLine('ready');
  });
  afterAll(async () => {
    child.kill();
    if (child.exitCode === null) await once(child, 'exit');
  });

  const spinIn = async (where: 'main' | 'worker') => {
    const before = sampleThreadCpu(child.pid!);
    child.stdin!.write(`${where} 600\n`);
    await nextLine('done');
    const after = sampleThreadCpu(child.pid!);
    return { main: after.main - before.main, node: after.node - before.node };
  };

  it("counts a worker thread's work under node and the main thread's under main", async () => {
    const worker = await spinIn('worker');
    expect(worker.node).toBeGreaterThan(worker.main);
    const main = await spinIn('main');
    expect(main.main).toBeGreaterThan(main.node);
  });

  it('reads nothing for a process that is gone', () => {
    expect(sampleThreadCpu(2 ** 22 + 12345)).toEqual({ main: 0, node: 0, core: 0 });
  });
});
