/**
 * The tools module worker processes load in long-run crash tests (env KEEL_TOOLS_MODULE points here):
 * `read_report_part` as `reportTools` registers it, with each call's idempotency key and part
 * appended to `parts.log` in the folder named by env KEEL_TEST_SIDE_EFFECTS (synchronously: the line
 * is on disk before the worker can be killed).
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { ToolRegistry } from '../../src/tools/registry';
import { REPORT_TOOL, reportPart } from './report-parts';

/** The log of parts read in `dir`: `<idempotency key> <part>` per line. */
export function partsLog(dir: string): string {
  return join(dir, 'parts.log');
}

/** Registers `read_report_part`; throws when KEEL_TEST_SIDE_EFFECTS is unset, naming the fix. */
export function registerTools(registry: ToolRegistry): void {
  const dir = process.env.KEEL_TEST_SIDE_EFFECTS;
  if (!dir) throw new Error('KEEL_TEST_SIDE_EFFECTS is not set: point it at a folder for the parts log');
  registry.register({
    name: REPORT_TOOL,
    description: 'Returns one part of the quarterly report.',
    input: z.object({ part: z.number().int().positive(), of: z.number().int().positive() }),
    async run(input, ctx) {
      appendFileSync(partsLog(dir), `${ctx.idempotencyKey} ${input.part}\n`);
      return reportPart(input.part, input.of, 4);
    },
  });
}
