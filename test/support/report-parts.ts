/**
 * A long agent task for tests and the bench: a report of many parts, read one tool call at a time.
 * `read_report_part` returns a part of about a thousand tokens; the model (`reportReader`) decides
 * from the request it receives what to do next: read the part after the last one it sees, or
 * finish when the last part is in. Nothing counts rounds in the test: a compaction that lost the
 * latest part, or a turn that skipped one, shows as a wrong next call.
 */
import { z } from 'zod';
import { ToolRegistry } from '../../src/tools/registry';
import { fakeReply, type FakeRequest, type FakeStep } from '../../src/testing';
import { toolChoiceIsNone } from '../../src/testing/fake-request-rules';

export const REPORT_TOOL = 'read_report_part';

/** Every `every`th part records a decision with an identifier a summary must keep. */
export const DECISION_EVERY = 30;

/** The decision identifier of part `n` (when it has one). */
export function decisionId(n: number): string {
  return `DEC-${String(n).padStart(4, '0')}`;
}

const FILLER =
  'The section walks through the measurements of the week, the pipeline stages that ran, the queue depths seen at each hour and the notes the operators left beside them, in plain words.';

/** Part `n` of `of`: its header the reader parses, a decision every `DECISION_EVERY` parts, then about `sentences` sentences of detail. */
export function reportPart(n: number, of: number, sentences = 28): string {
  const decision =
    n % DECISION_EVERY === 0 ? ` Decision ${decisionId(n)}: keep shard ${n} on the primary cluster.` : '';
  return `Report part ${n} of ${of}.${decision} ${Array.from({ length: sentences }, () => FILLER).join(' ')}`;
}

/** The task message that starts a run of `parts` parts. */
export function reportTask(parts: number): string {
  return `Read the quarterly report, all ${parts} parts, one part per ${REPORT_TOOL} call, then tell me it is done.`;
}

/** A registry with `read_report_part`; `calls` records each part read (its idempotency key and part). */
export function reportTools(calls: Array<{ key: string; part: number }> = [], sentences?: number): ToolRegistry {
  const registry = new ToolRegistry();
  registry.register({
    name: REPORT_TOOL,
    description: 'Returns one part of the quarterly report.',
    input: z.object({ part: z.number().int().positive(), of: z.number().int().positive() }),
    async run(input, ctx) {
      calls.push({ key: ctx.idempotencyKey, part: input.part });
      return reportPart(input.part, input.of, sentences);
    },
  });
  return registry;
}

/**
 * The last report part the request carries, as "part N of M" from the newest tool result (Anthropic
 * or OpenAI shape), since the newest task: a new task starts from its first part, while "continue"
 * goes on from the parts before it.
 */
export function lastPartSeen(request: FakeRequest): { part: number; of: number } | undefined {
  const messages = request.body.messages ?? [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    const blocks = Array.isArray(m.content) ? (m.content as Array<{ type: string; text?: string }>) : [];
    const results = m.role === 'tool' ? [m.content] : blocks.filter((b) => b.type === 'tool_result');
    const found = [...JSON.stringify(results).matchAll(/Report part (\d+) of (\d+)\./g)].pop();
    if (found) return { part: Number(found[1]), of: Number(found[2]) };
    const text =
      typeof m.content === 'string' ? m.content : blocks.map((b) => (b.type === 'text' ? b.text : '')).join('');
    if (m.role === 'user' && results.length === 0 && TASK.test(text) && !text.includes('<summary>')) return undefined;
  }
  return undefined;
}

/** A task message names its part count. */
const TASK = /all (\d+) parts/;

/** The number of parts the task asks for, from the task as the request carries it (the message, or a summary's copy). */
function partsAsked(request: FakeRequest): number {
  const found = [...JSON.stringify(request.body.messages ?? []).matchAll(/all (\d+) parts/g)].pop();
  if (!found) throw new Error(`request #${request.index} carries no report task: the task was lost`);
  return Number(found[1]);
}

/**
 * The model of a report-reading run: with tools forbidden (the run's budget), a report of where it
 * stands; otherwise the next part, or "done" once the last part is in.
 */
export function reportReader(request: FakeRequest): FakeStep {
  const seen = lastPartSeen(request);
  const of = seen?.of ?? partsAsked(request);
  if (toolChoiceIsNone(request.body))
    return fakeReply.text(`Stopped at part ${seen?.part ?? 0} of ${of}; next is part ${(seen?.part ?? 0) + 1}.`);
  if (seen && seen.part >= seen.of) return fakeReply.text(`Done: all ${seen.of} parts read.`);
  const next = (seen?.part ?? 0) + 1;
  return fakeReply.toolUse([
    { id: `toolu_part_${next}_${request.index}`, name: REPORT_TOOL, input: { part: next, of } },
  ]);
}
