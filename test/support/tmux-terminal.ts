/**
 * A real pseudo-terminal for CLI tests, through tmux: the process under test sees a TTY (raw-mode
 * readline, Ctrl-C and Ctrl-D as keys), the test types keys and reads the screen, as a person would.
 * Each terminal runs on its own tmux server (socket), so tests never meet another tmux.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { entryArgs } from './compiled-entries';
import { tmuxPath } from './tool-path';

const root = resolve(__dirname, '../..');

/** What the wrapper prints once the process under test has exited (with its exit code). */
export const EXITED = /\[exited (\d+)\]/;

export interface Terminal {
  /** tmux key names (`Enter`, `C-c`, `C-d`) or literal text, as `tmux send-keys` takes them. */
  keys(...keys: string[]): void;
  /** Types a line and presses Enter. */
  line(text: string): void;
  /** Everything the terminal shows and has scrolled away, wrapped lines joined. */
  screen(): string;
  /** Waits until the screen matches (a match after `after` characters, when given); returns the screen. */
  waitFor(pattern: RegExp, opts?: { timeoutMs?: number; after?: number }): Promise<string>;
  close(): void;
}

/** Runs `keel <args>` in a 200×50 terminal, with `env` over this process's environment (undefined unsets). */
export function keelInTerminal(
  name: string,
  args: string[],
  env: Record<string, string | undefined>,
  dir: string,
): Terminal {
  const socket = `keel-test-${process.pid}-${name}`;
  const vars = { ...process.env, ...env };
  const lines = ['#!/bin/bash', `cd ${quote(root)}`];
  for (const [k, v] of Object.entries(vars)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) continue;
    lines.push(v === undefined ? `unset ${k}` : `export ${k}=${quote(v)}`);
  }
  lines.push(
    `${[process.execPath, ...entryArgs('workers/keel.ts', vars), ...args].map(quote).join(' ')}`,
    'echo "[exited $?]"',
    'sleep 600',
  );
  const script = join(dir, `${name}.sh`);
  writeFileSync(script, `${lines.join('\n')}\n`, { mode: 0o755 });
  const tmux = (...a: string[]) => execFileSync(tmuxPath() ?? 'tmux', ['-L', socket, ...a], { encoding: 'utf8' });
  tmux('new-session', '-d', '-s', name, '-x', '200', '-y', '50', script);
  // The pane's empty rows below the cursor are dropped, so text only ever grows at the end.
  const screen = () => tmux('capture-pane', '-p', '-J', '-S', '-5000', '-t', name).replace(/(\n[ \t]*)+$/, '');
  return {
    keys: (...keys) => void tmux('send-keys', '-t', name, ...keys),
    line(text) {
      tmux('send-keys', '-t', name, '-l', text);
      tmux('send-keys', '-t', name, 'Enter');
    },
    screen,
    async waitFor(pattern, opts = {}) {
      const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
      for (;;) {
        const shown = screen();
        if (pattern.test(shown.slice(opts.after ?? 0))) return shown;
        if (Date.now() > deadline) throw new Error(`the terminal never showed ${String(pattern)}; it shows:\n${shown}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    },
    close() {
      try {
        tmux('kill-server');
      } catch {
        // already gone
      }
    },
  };
}

function quote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
