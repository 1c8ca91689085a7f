import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** A process's resident set in MB, from /proc (Linux, where the bench runs). */
export function processRssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  if (!line) throw new Error(`no VmRSS for process ${pid}`);
  return Math.round(Number(line.replace(/\D+/g, '')) / 1024);
}

/** A child process started from `args`, resolved once it prints `readyText`; `stop()` sends SIGTERM and waits. */
export interface BenchProcess {
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

export async function startBenchProcess(
  args: readonly string[],
  env: Record<string, string>,
  readyText: string,
): Promise<BenchProcess> {
  const child = spawn(process.execPath, [...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // What the child printed until it was ready (an early exit shows it). Later lines are read and
  // dropped: the pipe must not fill, and keeping and searching them cost the bench's own CPU under load.
  let out = '';
  let ready = false;
  const onData = (d: Buffer) => {
    if (!ready) out += d.toString();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  await new Promise<void>((resolve, reject) => {
    const onReady = () => {
      if (!out.includes(readyText)) return;
      ready = true;
      child.stdout!.off('data', onReady);
      child.stderr!.off('data', onReady);
      resolve();
    };
    child.stdout!.on('data', onReady);
    child.stderr!.on('data', onReady);
    child.once('exit', (code, signal) =>
      reject(new Error(`${args.join(' ')} exited early (code ${code}, signal ${signal}):\n${out}`)),
    );
  });
  return {
    child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
