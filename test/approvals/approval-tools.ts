/**
 * The tools module worker processes load in the approval tests (env KEEL_TOOLS_MODULE points here).
 *
 * `send_invoice` asks for approval when the amount is over 100 (its own policy function) and counts
 * every run: each appends its idempotency key to `performed.log` in the folder named by env
 * KEEL_TEST_SIDE_EFFECTS, so a test sees how often the tool ran and with which key.
 */
import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import type { ToolRegistry } from '../../src/tools/registry';
import { sideEffectFiles } from '../support/crash-tools';

/** Name of the tool that waits for approval above 100. */
export const INVOICE_TOOL = 'send_invoice';

/** Registers `send_invoice`; throws when KEEL_TEST_SIDE_EFFECTS is unset, naming the fix. */
export function registerTools(registry: ToolRegistry): void {
  const dir = process.env.KEEL_TEST_SIDE_EFFECTS;
  if (!dir) throw new Error('KEEL_TEST_SIDE_EFFECTS is not set: point it at a folder for the run log');
  const { performed } = sideEffectFiles(dir);
  registry.register({
    name: INVOICE_TOOL,
    description: 'Sends an invoice (test tool).',
    input: z.object({ customer: z.string(), amount: z.number(), apiKey: z.string().optional() }),
    approval: (input) => input.amount > 100,
    async run(input, ctx) {
      // Synchronous: the line is on disk before the worker can be killed.
      appendFileSync(performed, `${ctx.idempotencyKey}\n`);
      return `invoice of ${input.amount} sent to ${input.customer}`;
    },
  });
}
