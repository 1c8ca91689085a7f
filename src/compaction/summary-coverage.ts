/**
 * Identifier coverage of two summaries of (usually) the same range: which of the range's protected
 * identifiers each kept verbatim, and the ones only one of them kept (`keel compactions compare`).
 */

export interface SummaryCoverage {
  /** Identifiers kept verbatim, in the range's order. */
  readonly kept: readonly string[];
  readonly missing: readonly string[];
}

export interface IdentifierCoverage {
  /** The identifiers of the summarized range(s), unique, in order of appearance. */
  readonly identifiers: readonly string[];
  readonly a: SummaryCoverage;
  readonly b: SummaryCoverage;
  readonly onlyA: readonly string[];
  readonly onlyB: readonly string[];
}

/** A summary keeps an identifier when it appears verbatim (the quality guard's test). */
function coverageOf(identifiers: readonly string[], summary: string): SummaryCoverage {
  const kept = identifiers.filter((id) => summary.includes(id));
  return { kept, missing: identifiers.filter((id) => !summary.includes(id)) };
}

export function identifierCoverage(identifiers: readonly string[], a: string, b: string): IdentifierCoverage {
  const unique = [...new Set(identifiers)];
  const ca = coverageOf(unique, a);
  const cb = coverageOf(unique, b);
  const inB = new Set(cb.kept);
  const inA = new Set(ca.kept);
  return {
    identifiers: unique,
    a: ca,
    b: cb,
    onlyA: ca.kept.filter((id) => !inB.has(id)),
    onlyB: cb.kept.filter((id) => !inA.has(id)),
  };
}
