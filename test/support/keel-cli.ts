import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { entryArgs } from './compiled-entries';

const root = resolve(__dirname, '../..');

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a TypeScript entry point of the repository as a real process, the way a person or a script would. */
export function runEntry(
  entry: string,
  args: string[],
  env: Record<string, string | undefined>,
  stdin?: string,
): Promise<Run> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, TS_NODE_SWC: 'true', TS_NODE_TRANSPILE_ONLY: 'true', ...env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete childEnv[k];
  const child = spawn(process.execPath, [...entryArgs(entry, childEnv), ...args], { cwd: root, env: childEnv });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  if (stdin !== undefined) child.stdin.end(stdin);
  else child.stdin.end();
  return new Promise((resolveRun) => child.on('close', (code) => resolveRun({ code, stdout, stderr })));
}

/** Runs `keel <args>`. */
export function keel(args: string[], env: Record<string, string | undefined>, stdin?: string): Promise<Run> {
  return runEntry('workers/keel.ts', args, env, stdin);
}

/** A `keel` process that keeps running: its stdin stays open for lines written one at a time. */
export interface LiveKeel {
  readonly pid: number;
  /** Resolves once `pattern` has appeared on the stream (everything printed so far counts). */
  waitFor(stream: 'stdout' | 'stderr', pattern: RegExp | string): Promise<void>;
  write(text: string): void;
  /** Closes stdin (end of input) and resolves with the finished run. */
  end(): Promise<Run>;
  signal(sig: NodeJS.Signals): void;
  readonly exited: Promise<Run>;
  output(): { stdout: string; stderr: string };
}

/** Starts `keel <args>` and leaves it running. */
export function startKeel(args: string[], env: Record<string, string | undefined>): LiveKeel {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, TS_NODE_SWC: 'true', TS_NODE_TRANSPILE_ONLY: 'true', ...env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete childEnv[k];
  const child = spawn(process.execPath, [...entryArgs('workers/keel.ts', childEnv), ...args], {
    cwd: root,
    env: childEnv,
  });
  const out = { stdout: '', stderr: '' };
  const waiters: Array<() => void> = [];
  const onData = (stream: 'stdout' | 'stderr') => (d: Buffer) => {
    out[stream] += d.toString();
    for (const check of waiters.splice(0)) check();
  };
  child.stdout.on('data', onData('stdout'));
  child.stderr.on('data', onData('stderr'));
  const exited = new Promise<Run>((resolveRun) => child.on('close', (code) => resolveRun({ code, ...out })));
  let done = false;
  void exited.then(() => {
    done = true;
    for (const check of waiters.splice(0)) check();
  });
  return {
    pid: child.pid!,
    waitFor(stream, pattern) {
      return new Promise<void>((resolveWait, reject) => {
        const check = () => {
          if (typeof pattern === 'string' ? out[stream].includes(pattern) : pattern.test(out[stream]))
            return resolveWait();
          if (done)
            return reject(
              new Error(`keel ${args.join(' ')} exited before ${stream} showed ${String(pattern)}:\n${out.stderr}`),
            );
          waiters.push(check);
        };
        check();
      });
    },
    write: (text) => void child.stdin.write(text),
    end: () => {
      child.stdin.end();
      return exited;
    },
    signal: (sig) => void child.kill(sig),
    exited,
    output: () => ({ ...out }),
  };
}
