/**
 * A replay report: the recorded conversation played under one or more policies, the per-turn
 * numbers of each, and the table of what differs between them. Advice is an input (from whoever
 * profiled the session); the report only shows it.
 */
import { reserveForWindow } from '../context/context-window';
import type { ReplayPolicy } from './replay-policy';
import { replaySession, splitTurns, type PolicyReplay } from './replay-session';
import type { ReplayTranscript } from './replay-source';
import type { ReplaySummarizer } from './replay-summarizer';

/** One row of the differences table: a metric and its value under each policy, in policy order. */
export interface ReplayDifference {
  readonly metric: string;
  readonly values: readonly string[];
  /** False when every policy gives the same value. */
  readonly differs: boolean;
}

export interface ReplayReport {
  readonly source: string;
  readonly turns: number;
  readonly messages: number;
  /** JSONL lines that could not be used (0 for a stored session). */
  readonly droppedLines: number;
  readonly policies: readonly PolicyReplay[];
  readonly differences: readonly ReplayDifference[];
  readonly advice?: readonly string[];
}

export interface RunReplayOptions {
  readonly advice?: readonly string[];
  /** The configured summarizer model, for policies with `"summarizer": "model"`. */
  readonly modelSummarizer?: ReplaySummarizer;
  /** Progress over all policies' turns together. */
  readonly onProgress?: (done: number, total: number) => void;
}

/** Replays the transcript under each policy in turn and builds the report. */
export async function runReplay(
  transcript: ReplayTranscript,
  policies: readonly ReplayPolicy[],
  options: RunReplayOptions = {},
): Promise<ReplayReport> {
  const turns = splitTurns(transcript.entries).length;
  const total = turns * policies.length;
  const runs: PolicyReplay[] = [];
  for (const [k, policy] of policies.entries()) {
    runs.push(
      await replaySession(transcript, policy, {
        onTurn: (done) => options.onProgress?.(k * turns + done, total),
        ...(options.modelSummarizer ? { modelSummarizer: options.modelSummarizer } : {}),
      }),
    );
  }
  return {
    source: transcript.source,
    turns,
    messages: transcript.entries.length,
    droppedLines: transcript.droppedLines,
    policies: runs,
    differences: differences(runs),
    ...(options.advice && options.advice.length > 0 ? { advice: options.advice } : {}),
  };
}

/** Thousands with a k/M suffix: 1.2k, 3.4M. */
export function shortTokens(n: number): string {
  if (n >= 1_000_000) return `${(n / 1_000_000).toFixed(2)}M`;
  if (n >= 1_000) return `${(n / 1_000).toFixed(1)}k`;
  return String(n);
}

/** Turn numbers as a short list: `12, 25, 40` (`…` past eight). */
export function turnList(turns: readonly number[]): string {
  if (turns.length === 0) return 'none';
  const shown = turns.slice(0, 8).join(', ');
  return turns.length > 8 ? `${shown}, … (${turns.length})` : shown;
}

function differences(runs: readonly PolicyReplay[]): ReplayDifference[] {
  const first = runs[0]?.totals.tokensSent ?? 0;
  const rows: Array<[string, (r: PolicyReplay) => string]> = [
    ['context window', (r) => shortTokens(r.policy.contextWindow)],
    ['compacts above', (r) => `${shortTokens(compactsAbove(r))} context tokens`],
    ['context engine', (r) => engineText(r.policy)],
    [
      'compactions',
      (r) =>
        `${r.totals.compactions}${r.totals.skippedCompactions ? ` (+${r.totals.skippedCompactions} skipped)` : ''}`,
    ],
    ['compaction turns', (r) => turnList(r.compactions.filter((c) => c.status === 'succeeded').map((c) => c.turn))],
    ['turns with pruned tool output', (r) => String(r.totals.prunedTurns)],
    ['memory flushes', (r) => String(r.totals.memoryFlushes)],
    [
      'peak context',
      (r) => `${shortTokens(r.totals.peakContextTokens)} (${(r.totals.peakPressure * 100).toFixed(1)}%)`,
    ],
    [
      'tokens sent (cost)',
      (r) =>
        `${shortTokens(r.totals.tokensSent)}${first > 0 && r !== runs[0] ? ` (${signedPercent(r.totals.tokensSent / first - 1)})` : ''}`,
    ],
    [
      'summaries',
      (r) =>
        `${r.policy.summarizer}${r.compactions.some((c) => c.degraded) ? ` (${r.compactions.filter((c) => c.degraded).length} fell back to extractive)` : ''}`,
    ],
    ['final summary', (r) => `${r.totals.finalSummaryChars.toLocaleString('en-US')} chars`],
    [
      'identifiers kept',
      (r) =>
        `${r.identifiers.kept.length} of ${r.identifiers.summarized}${r.identifiers.lost.length ? ` (lost: ${r.identifiers.lost.slice(0, 5).join(', ')}${r.identifiers.lost.length > 5 ? ', …' : ''})` : ''}`,
    ],
  ];
  return rows.map(([metric, value]) => {
    const values = runs.map(value);
    // Percentages against the first policy always differ in text; compare the raw totals instead.
    const differs =
      metric === 'tokens sent (cost)'
        ? new Set(runs.map((r) => r.totals.tokensSent)).size > 1
        : new Set(values).size > 1;
    return { metric, values, differs };
  });
}

/** The after-turn threshold: the window less the effective reserve. */
function compactsAbove(r: PolicyReplay): number {
  return r.policy.contextWindow - reserveForWindow(r.policy.contextWindow, r.policy);
}

function engineText(policy: ReplayPolicy): string {
  const o = policy.contextEngineOptions;
  if (!o || Object.keys(o).length === 0) return policy.contextEngine;
  return `${policy.contextEngine} (${Object.entries(o)
    .map(([k, v]) => `${k} ${String(v)}`)
    .join(', ')})`;
}

function signedPercent(share: number): string {
  const p = Math.round(share * 1000) / 10;
  return `${p > 0 ? '+' : ''}${p}%`;
}
