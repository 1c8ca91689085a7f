/**
 * A tools module for CLI tests (env KEEL_TOOLS_MODULE points here): `read_screen` answers with what
 * the process has printed on stdout so far, once `waitFor` shows up there. `keel dev` runs its worker
 * in-process, so a tool called between two model calls proves what the chat printed mid-turn.
 */
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
}
