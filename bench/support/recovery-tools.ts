/**
 * The tools module the recovery bench's worker processes load (KEEL_TOOLS_MODULE): `pause` waits
 * a little, as a real tool's API call would, and first appends its worker's pid to the file named
 * by KEEL_BENCH_TOOL_PIDS, so the bench can kill the worker that runs it.
 */
import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import type { ToolRegistry } from '../../src/tools/registry';

/** How long one `pause` call takes. */
const PAUSE_MS = 400;

/** Registers `pause`; throws when KEEL_BENCH_TOOL_PIDS is unset, naming the fix. */
export function registerTools(registry: ToolRegistry): void {
  const pids = process.env.KEEL_BENCH_TOOL_PIDS;
  if (!pids) throw new Error('KEEL_BENCH_TOOL_PIDS is not set: point it at a file for the tool runs');
  registry.register({
    name: 'pause',
    description: 'Waits a moment (bench tool).',
    input: z.object({ n: z.number() }),
    async run({ n }, ctx) {
      // Synchronous: the line is on disk before the bench can kill this worker.
      appendFileSync(pids, `${process.pid} ${n}\n`);
      await new Promise((r) => setTimeout(r, PAUSE_MS));
      if (ctx.signal.aborted) throw new Error('pause: cancelled');
      return `paused ${n}`;
    },
  });
}
