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

export async function startBenchProcess(args: readonly string[], env: Record<string, string>, readyText: string): Promise<BenchProcess> {
  const child = spawn(process.execPath, [...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d.toString();
      if (out.includes(readyText)) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code, signal) => reject(new Error(`${args.join(' ')} exited early (code ${code}, signal ${signal}):\n${out}`)));
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
