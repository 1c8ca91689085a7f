/**
 * A tools module for CLI tests (env KEEL_TOOLS_MODULE points here); each tool, called between two
 * model calls, proves what a chat printed while the turn was still running:
 * - `read_screen` answers with what this process printed on stdout so far, once `waitFor` shows up
 *   there (`keel dev` runs its worker in-process);
 * - `wait_for_gate` waits until the file named by env KEEL_TEST_GATE exists (a test creates it when
 *   it sees the chat of another process print) and answers `released`, or `timed out`.
 */
import { existsSync } from 'node:fs';
import { z } from 'zod';
import type { ToolRegistry } from '../../src/tools/registry';

export function registerTools(registry: ToolRegistry): void {
  let printed = '';
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    printed += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
  registry.register({
    name: 'read_screen',
    description: 'What the chat has printed so far',
    input: z.object({ waitFor: z.string() }),
    run: async ({ waitFor }) => {
      for (let i = 0; i < 100 && !printed.includes(waitFor); i++) await new Promise((r) => setTimeout(r, 50));
      return printed;
    },
  });
  registry.register({
    name: 'wait_for_gate',
    description: 'Waits for the test to open the gate',
    input: z.object({}),
    run: async () => {
      const gate = process.env.KEEL_TEST_GATE ?? '';
      for (let i = 0; i < 600 && !existsSync(gate); i++) await new Promise((r) => setTimeout(r, 100));
      return existsSync(gate) ? 'released' : 'timed out';
    },
  });
}
