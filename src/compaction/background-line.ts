/**
 * The line the chat and `keel status` show for a compaction running beside the session: the turns
 * go on meanwhile, unless the context reached its limit, and then a turn waits and the line says why.
 *
 * @example backgroundCompactionLine({ trigger: 'soft', runningMs: 12_400, turnWaitingMs: 3_000, … })
 *   // 'compacting: 12 s (soft, in the background) · the context reached its limit: the next turn waits for the summary'
 */
export function backgroundCompactionLine(b: {
  readonly trigger: string;
  readonly runningMs: number;
  readonly turnWaitingMs?: number | undefined;
}): string {
  const line = `compacting: ${Math.round(b.runningMs / 1000)} s (${b.trigger}, in the background)`;
  return b.turnWaitingMs === undefined
    ? `${line} · turns go on meanwhile`
    : `${line} · the context reached its limit: the next turn waits for the summary`;
}
