/**
 * Compaction planning bench: planning and extractive-summary time on generated transcripts of about
 * 1M and 10M tokens, and summarizer input per compaction over a sequence of stacked compactions
 * (re-distillation keeps it at previous summary + new entries, whatever the history length).
 *
 * Run: `npx ts-node --swc bench/compaction-plan.ts` (JSON on stdout, progress on stderr).
 * Tokens use a cheap chars/4 estimator cached per message, so memory stays bounded at 10M tokens.
 */
import { DEFAULTS } from '../src/config/defaults';
import { extractiveSummary } from '../src/compaction/extractive-summary';
import { planCompaction } from '../src/compaction/plan-compaction';
import { serializeForSummary, messageText } from '../src/compaction/serialize-for-summary';
import type { PlanEntry } from '../src/compaction/types';
import type { AgentMessage } from '../src/context/types';

const WINDOW = DEFAULTS.contextWindowTokens;
const RESERVE = DEFAULTS.reserveTokensFloor;

/** chars/4, computed once per message. */
function cachedEstimator(): (m: AgentMessage) => number {
  const cache = new WeakMap<AgentMessage, number>();
  return (m) => {
    let v = cache.get(m);
    if (v === undefined) cache.set(m, (v = Math.max(1, Math.ceil(messageText(m).length / 4))));
    return v;
  };
}

const RESULT_LINES = Array.from({ length: 40 }, (_, k) => `line ${k}: processed record ${k * 37} in 12ms, status ok`);

/** A generated transcript of about `tokens` tokens (by `estimate`): 4 messages per turn, identifiers now and then. */
function generate(tokens: number, estimate: (m: AgentMessage) => number): PlanEntry[] {
  const entries: PlanEntry[] = [];
  let total = 0;
  const push = (message: AgentMessage) => {
    entries.push({ id: `e${entries.length}`, message });
    total += estimate(message);
  };
  for (let t = 0; total < tokens; t++) {
    const id = t % 50 === 0 ? ` see /srv/app/module-${t}/index.ts and host-${t}.internal:${5000 + (t % 1000)}` : '';
    push({ role: 'user', content: `Turn ${t}: continue with the next batch of records, please.${id}` });
    push({
      role: 'assistant',
      content: [
        {
          type: 'text',
          text:
            t % 25 === 0
              ? `We decided to process batch ${t} in parallel. TODO: check batch ${t}`
              : 'Running the next batch.',
        },
        { type: 'toolCall', id: `c${t}`, name: 'bash', arguments: { command: `process --batch ${t}` } },
      ],
      stopReason: 'toolUse',
    });
    push({
      role: 'toolResult',
      toolCallId: `c${t}`,
      toolName: 'bash',
      content: [{ type: 'text', text: RESULT_LINES.join('\n') }],
    });
    push({
      role: 'assistant',
      content: [
        {
          type: 'text',
          text: `Batch ${t} is done; ${RESULT_LINES.length} records processed without errors so far, moving on to the next one now.`,
        },
      ],
      stopReason: 'stop',
    });
  }
  return entries;
}

function ms(since: bigint): number {
  return Number(process.hrtime.bigint() - since) / 1e6;
}

export interface PlanTiming {
  targetTokens: number;
  entries: number;
  tokensBefore: number;
  chunks: number;
  planMs: number;
  extractiveMs: number;
  summaryChars: number;
}

/** Plans one compaction of the whole transcript and writes its extractive summary. */
function timePlan(targetTokens: number): PlanTiming {
  const estimate = cachedEstimator();
  const entries = generate(targetTokens, estimate); // estimates are cached here: tokenizing is not the planner's cost
  let start = process.hrtime.bigint();
  const plan = planCompaction(entries, {
    contextWindow: WINDOW,
    keepRecentTokens: DEFAULTS.keepRecentTokens,
    estimate,
  });
  const planMs = ms(start);
  start = process.hrtime.bigint();
  const summary = extractiveSummary({
    messages: entries.slice(0, plan.summarizedEntryCount).map((e) => e.message),
    policy: 'strict',
  });
  const extractiveMs = ms(start);
  return {
    targetTokens,
    entries: entries.length,
    tokensBefore: plan.tokensBefore,
    chunks: plan.chunks.length,
    planMs,
    extractiveMs,
    summaryChars: summary.length,
  };
}

export interface StackedRow {
  compaction: number;
  historyTokens: number;
  newEntryTokens: number;
  previousSummaryTokens: number;
  /** newEntryTokens + previousSummaryTokens: what re-distillation should send. */
  expectedInputTokens: number;
  /** Measured: previous summary + serialized chunk texts, as summarizeWithFallback would send them. */
  summarizerInputTokens: number;
}

/** Grows a session to `totalTokens`, compacting whenever the active context crosses window − reserve. */
function stacked(totalTokens: number): StackedRow[] {
  const estimate = cachedEstimator();
  const entries = generate(totalTokens, estimate);
  const rows: StackedRow[] = [];
  let summary: string | undefined;
  let start = 0;
  let active = 0;
  let history = 0;
  for (let i = 0; i < entries.length; i++) {
    const t = estimate(entries[i].message);
    active += t;
    history += t;
    const summaryTokens = summary ? Math.ceil(summary.length / 4) : 0;
    if (active + summaryTokens <= WINDOW - RESERVE) continue;
    const slice = entries.slice(start, i + 1);
    const plan = planCompaction(slice, {
      contextWindow: WINDOW,
      keepRecentTokens: DEFAULTS.keepRecentTokens,
      estimate,
      previousSummary: summary,
    });
    const summarized = slice.slice(0, plan.summarizedEntryCount).map((e) => e.message);
    const chunkText = serializeForSummary(summarized);
    rows.push({
      compaction: rows.length + 1,
      historyTokens: history,
      newEntryTokens: plan.summarizedTokens,
      previousSummaryTokens: plan.previousSummaryTokens,
      expectedInputTokens: plan.summarizedTokens + plan.previousSummaryTokens,
      summarizerInputTokens: Math.ceil(chunkText.length / 4) + summaryTokens,
    });
    summary = extractiveSummary({ previousSummary: summary, messages: summarized, policy: 'strict' });
    start =
      plan.firstKeptEntryId === null
        ? i + 1
        : entries.findIndex((e, k) => k >= start && e.id === plan.firstKeptEntryId);
    active = plan.keptTokens;
  }
  return rows;
}

export interface CompactionPlanBench {
  plan: PlanTiming[];
  stacked: StackedRow[];
}

/** Runs the bench and returns its numbers. */
export function run(options: { sizes?: number[]; stackedTokens?: number; quick?: boolean } = {}): CompactionPlanBench {
  const sizes = options.sizes ?? (options.quick ? [1_000_000] : [1_000_000, 10_000_000]);
  const plan = sizes.map((size) => {
    process.stderr.write(`planning a ~${size.toLocaleString()}-token transcript…\n`);
    return timePlan(size);
  });
  process.stderr.write('stacked compactions…\n');
  return { plan, stacked: stacked(options.stackedTokens ?? (options.quick ? 600_000 : 2_000_000)) };
}

if (require.main === module) {
  process.stdout.write(`${JSON.stringify(run(), null, 2)}\n`);
}

/** Planning time per 1M tokens against the 1 s target, and whether stacked summarizer input stays flat. */
export function ratioLines(r: CompactionPlanBench): string[] {
  const lines = r.plan.map((p) => {
    const msPerMillion = Math.round((p.planMs / p.tokensBefore) * 1_000_000);
    return `planning ${p.tokensBefore.toLocaleString()} tokens (${p.entries.toLocaleString()} entries): ${Math.round(p.planMs)} ms = ${msPerMillion} ms per 1M tokens (target ≤ 1,000: ${msPerMillion <= 1_000 ? 'met' : 'NOT met'}); extractive summary ${Math.round(p.extractiveMs)} ms`;
  });
  const last = r.stacked[r.stacked.length - 1];
  if (last)
    lines.push(
      `${r.stacked.length} stacked compactions: last summarizer input ${last.summarizerInputTokens.toLocaleString()} tokens (expected ${last.expectedInputTokens.toLocaleString()}) over ${last.historyTokens.toLocaleString()} tokens of history`,
    );
  return lines;
}
