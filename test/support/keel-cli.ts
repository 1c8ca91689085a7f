import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';

const root = resolve(__dirname, '../..');

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a TypeScript entry point of the repository as a real process, the way a person or a script would. */
export function runEntry(entry: string, args: string[], env: Record<string, string | undefined>, stdin?: string): Promise<Run> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, TS_NODE_SWC: 'true', TS_NODE_TRANSPILE_ONLY: 'true', ...env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete childEnv[k];
  const child = spawn(process.execPath, ['-r', 'ts-node/register', join(root, entry), ...args], { cwd: root, env: childEnv });
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
