/**
 * The rendering of `keel compactions compare`: two summaries side by side when the terminal is wide
 * enough (stacked when not), then the identifier coverage of each. Pure: text in, text out.
 */
import type { IdentifierCoverage } from '../compaction/summary-coverage';

/** One side of the comparison. */
export interface ComparedSummary {
  readonly id: string;
  /** e.g. `manual, model claude-…` or `rerun of <id>`. */
  readonly label: string;
  readonly summary: string;
}

/** Narrowest column worth reading; below two of them (and the gutter) the summaries are stacked. */
const MIN_COLUMN = 32;
const GUTTER = ' │ ';
/** Identifiers listed per "only one kept" line before "… and N more". */
const LISTED = 20;

/** `text` wrapped to `width` columns (hard-cut words longer than a column), one array entry per line. */
export function wrapLines(text: string, width: number): string[] {
  const out: string[] = [];
  for (const raw of text.split('\n')) {
    let line = raw.replace(/\t/g, '  ');
    if (line.length === 0) {
      out.push('');
      continue;
    }
    while ([...line].length > width) {
      const chars = [...line];
      const head = chars.slice(0, width).join('');
      const space = head.lastIndexOf(' ');
      const cut = space > width / 3 ? space : width;
      out.push(chars.slice(0, cut).join('').trimEnd());
      line = chars.slice(cut).join('').trimStart();
    }
    out.push(line);
  }
  return out;
}

function pad(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - [...text].length));
}

function coverageLines(coverage: IdentifierCoverage, a: ComparedSummary, b: ComparedSummary): string[] {
  const total = coverage.identifiers.length;
  const listed = (ids: readonly string[]) =>
    ids.length === 0
      ? 'none'
      : `${ids.slice(0, LISTED).join(', ')}${ids.length > LISTED ? ` … and ${ids.length - LISTED} more` : ''}`;
  return [
    `── identifier coverage (${total} in the summarized range) ──`,
    `${a.id}: kept ${coverage.a.kept.length}/${total}`,
    `${b.id}: kept ${coverage.b.kept.length}/${total}`,
    `only ${a.id} kept: ${listed(coverage.onlyA)}`,
    `only ${b.id} kept: ${listed(coverage.onlyB)}`,
  ];
}

/** The comparison as lines of at most `width` columns (side by side) or stacked below `2 × 32 + 3` columns. */
export function renderComparison(
  a: ComparedSummary,
  b: ComparedSummary,
  coverage: IdentifierCoverage,
  width: number,
): string {
  const lines: string[] = [];
  const column = Math.floor((width - GUTTER.length) / 2);
  if (column >= MIN_COLUMN) {
    const left = [...wrapLines(`${a.id} (${a.label})`, column), '─'.repeat(column), ...wrapLines(a.summary, column)];
    const right = [...wrapLines(`${b.id} (${b.label})`, column), '─'.repeat(column), ...wrapLines(b.summary, column)];
    for (let i = 0; i < Math.max(left.length, right.length); i++)
      lines.push(`${pad(left[i] ?? '', column)}${GUTTER}${right[i] ?? ''}`.trimEnd());
  } else {
    const w = Math.max(1, width);
    lines.push(
      ...wrapLines(`── ${a.id} (${a.label}) ──`, w),
      ...wrapLines(a.summary, w),
      '',
      ...wrapLines(`── ${b.id} (${b.label}) ──`, w),
      ...wrapLines(b.summary, w),
    );
  }
  lines.push('', ...coverageLines(coverage, a, b).flatMap((l) => wrapLines(l, Math.max(1, width))));
  return `${lines.join('\n')}\n`;
}
