/**
 * The replay report for a terminal: per policy, the context over the turns as a one-line chart
 * with compaction marks, bars for peak pressure and cost (the `context-bar.ts` style), then the
 * differences and the advice.
 */
import type { PolicyReplay } from './replay-session';
import { shortTokens, turnList, type ReplayReport } from './replay-report';

const LEVELS = '▁▂▃▄▅▆▇█';

/** `[██████░░░░]`: `ratio` of `width` filled. */
function bar(ratio: number, width: number): string {
  const filled = Math.round(Math.max(0, Math.min(1, ratio)) * width);
  return `[${'█'.repeat(filled)}${'░'.repeat(width - filled)}]`;
}

/**
 * Context tokens over the turns, `width` columns (each the highest turn of its bucket, scaled to
 * the window), with a second line marking columns where a compaction (`C`) or pruning (`p`) happened.
 */
export function contextSparkline(run: PolicyReplay, width = 48): [string, string] {
  const turns = run.turns;
  if (turns.length === 0) return ['', ''];
  const columns = Math.min(width, turns.length);
  let line = '';
  let marks = '';
  for (let c = 0; c < columns; c++) {
    const from = Math.floor((c * turns.length) / columns);
    const to = Math.max(from + 1, Math.floor(((c + 1) * turns.length) / columns));
    const bucket = turns.slice(from, to);
    const peak = Math.max(...bucket.map((t) => t.pressure));
    line += LEVELS[Math.min(LEVELS.length - 1, Math.floor(Math.min(1, peak) * LEVELS.length))];
    marks += bucket.some((t) => t.compactedAfter || t.compactedMidTurn)
      ? 'C'
      : bucket.some((t) => t.prunedResults > 0)
        ? 'p'
        : ' ';
  }
  return [line, marks.trimEnd()];
}

/** The whole report as terminal lines. */
export function renderReplayText(report: ReplayReport, width = 24): string {
  const out: string[] = [];
  out.push(
    `replay of ${report.source}: ${report.turns} turns, ${report.messages} messages${report.droppedLines ? ` (${report.droppedLines} unusable lines skipped)` : ''}`,
  );
  const maxSent = Math.max(1, ...report.policies.map((r) => r.totals.tokensSent));
  for (const run of report.policies) {
    const t = run.totals;
    const p = run.policy;
    out.push('');
    out.push(
      `policy ${p.name}: window ${shortTokens(p.contextWindow)} · reserve ${shortTokens(p.reserveTokens)} · engine ${p.contextEngine}`,
    );
    const [line, marks] = contextSparkline(run);
    out.push(`  turns    ${line}`);
    if (marks) out.push(`           ${marks}`);
    out.push(
      `  peak     ${bar(t.peakPressure, width)} ${(t.peakPressure * 100).toFixed(1)}% of ${shortTokens(p.contextWindow)} (${shortTokens(t.peakContextTokens)} tokens)`,
    );
    out.push(
      `  sent     ${bar(t.tokensSent / maxSent, width)} ${shortTokens(t.tokensSent)} tokens in ${t.modelCalls} model calls`,
    );
    const compacted = run.compactions.filter((c) => c.status === 'succeeded');
    const where = compacted.length > 0 ? ` (in turns ${turnList(compacted.map((c) => c.turn))})` : '';
    out.push(
      `  compact  ${t.compactions}${where}${t.skippedCompactions ? `, ${t.skippedCompactions} skipped` : ''} · pruned in ${t.prunedTurns} turns`,
    );
    if (compacted.length > 0) {
      const [low, high] = [
        Math.min(...compacted.map((c) => c.summaryChars)),
        Math.max(...compacted.map((c) => c.summaryChars)),
      ];
      const sizes =
        low === high ? low.toLocaleString('en-US') : `${low.toLocaleString('en-US')}–${high.toLocaleString('en-US')}`;
      const degraded = compacted.filter((c) => c.degraded).length;
      out.push(
        `  summary  ${sizes} chars (${p.summarizer}${degraded ? `, ${degraded} fell back to extractive` : ''}) · identifiers kept ${run.identifiers.kept.length} of ${run.identifiers.summarized}${run.identifiers.lost.length ? ` (lost ${run.identifiers.lost.slice(0, 5).join(', ')})` : ''}`,
      );
    }
  }
  if (report.policies.length > 1) {
    out.push('');
    out.push('differences:');
    const rows = report.differences.filter((d) => d.differs);
    if (rows.length === 0) out.push('  none: every policy replays the same');
    const label = Math.max(...rows.map((d) => d.metric.length), 0);
    for (const d of rows) out.push(`  ${d.metric.padEnd(label)}  ${d.values.join('  │  ')}`);
  }
  if (report.advice && report.advice.length > 0) {
    out.push('');
    out.push('advice:');
    // The lines carry their own markers and indentation (as `keel profile` prints them).
    for (const a of report.advice) out.push(`  ${a}`);
  }
  return `${out.join('\n')}\n`;
}
