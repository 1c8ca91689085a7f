/**
 * The tools module worker processes load in crash tests (env KEEL_TOOLS_MODULE points here).
 *
 * `record_side_effect` behaves like a real tool with a side effect that must happen once: every
 * attempt appends its idempotency key to `attempts.log`, and the side effect (a line in
 * `performed.log`) happens only when that key is not there yet. The FIRST attempt of a key then
 * blocks (heartbeating, so only a dead worker makes it time out) until the test SIGKILLs the worker.
 * Both files live in the folder named by env KEEL_TEST_SIDE_EFFECTS.
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Context } from '@temporalio/activity';
import { z } from 'zod';
import type { ToolRegistry } from '../../src/tools/registry';

/** Name of the side-effect tool the fake model calls. */
export const SIDE_EFFECT_TOOL = 'record_side_effect';

/** How often the blocked first attempt heartbeats (well under the tests' 2 s tool heartbeat timeout). */
const BLOCKED_HEARTBEAT_MS = 300;

/** The files a side-effect folder holds, one idempotency key per line. */
export function sideEffectFiles(dir: string): { attempts: string; performed: string } {
  return { attempts: join(dir, 'attempts.log'), performed: join(dir, 'performed.log') };
}

/** The lines of a log file (none when it does not exist yet). */
export function readLog(path: string): string[] {
  return existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [];
}

/** Resolves once the log file holds at least `count` lines, polling every `everyMs`. */
export async function waitForLines(path: string, count: number, timeoutMs = 60_000, everyMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (readLog(path).length < count) {
    if (Date.now() > deadline) throw new Error(`${path} has ${readLog(path).length} lines, expected ${count}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Registers `record_side_effect`; throws when KEEL_TEST_SIDE_EFFECTS is unset, naming the fix. */
export function registerTools(registry: ToolRegistry): void {
  const dir = process.env.KEEL_TEST_SIDE_EFFECTS;
  if (!dir) throw new Error('KEEL_TEST_SIDE_EFFECTS is not set: point it at a folder for the side-effect logs');
  const files = sideEffectFiles(dir);
  registry.register({
    name: SIDE_EFFECT_TOOL,
    description: 'Performs a side effect once per call (test tool).',
    input: z.object({ note: z.string() }),
    async run(input, ctx) {
      // Synchronous appends: the line is on disk before the worker can be killed.
      appendFileSync(files.attempts, `${ctx.idempotencyKey}\n`);
      const attempt = readLog(files.attempts).filter((k) => k === ctx.idempotencyKey).length;
      if (!readLog(files.performed).includes(ctx.idempotencyKey))
        appendFileSync(files.performed, `${ctx.idempotencyKey}\n`);
      if (attempt === 1) await blockUntilAborted(ctx.signal);
      return `side effect done: ${input.note}`;
    },
  });
}

/** Waits, heartbeating, until the activity is cancelled (the test kills the worker long before). */
async function blockUntilAborted(signal: AbortSignal): Promise<never> {
  const ctx = Context.current();
  for (;;) {
    if (signal.aborted) throw new Error('record_side_effect: cancelled while blocked');
    ctx.heartbeat();
    await new Promise((r) => setTimeout(r, BLOCKED_HEARTBEAT_MS));
  }
}
