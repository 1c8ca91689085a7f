/**
 * What compactions were billed for their summarizer calls, as the provider reported it: uncached
 * input, prompt-cache reads and writes, output. `keel compactions show` prints one compaction's,
 * `keel status` the sum of a session's (a summary asked on the prompt cache is mostly cache reads).
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema';
import type { CompactionView } from './compaction-views';

/** `1,200 input · 58,000 cache read · 0 cache write · 900 output tokens` (`, estimated: …` when Keel counted). */
export function billingText(b: CompactionView['summarizerBilling']): string {
  const n = (tokens: number): string => tokens.toLocaleString('en-US');
  const estimated = b.estimated ? ' (estimated: the model server reported no usage, Keel counted)' : '';
  return `${n(b.input)} input · ${n(b.cacheRead)} cache read · ${n(b.cacheWrite)} cache write · ${n(b.output)} output tokens${estimated}`;
}

/**
 * `compactions billed · 3 calls · 1,200 input · …` for `keel status`: the session's compactions
 * summed; null when none called a summarizer.
 */
export async function sessionCompactionBillingLine(
  db: Kysely<Database>,
  agentId: string,
  sessionKey: string,
): Promise<string | null> {
  const row = await db
    .selectFrom('compactions')
    .select((eb) => [
      eb.fn.coalesce(eb.fn.sum<number>('summarizer_calls'), eb.lit(0)).as('calls'),
      eb.fn.coalesce(eb.fn.sum<number>('summarizer_input_tokens'), eb.lit(0)).as('input'),
      eb.fn.coalesce(eb.fn.sum<number>('summarizer_cache_read_tokens'), eb.lit(0)).as('cache_read'),
      eb.fn.coalesce(eb.fn.sum<number>('summarizer_cache_write_tokens'), eb.lit(0)).as('cache_write'),
      eb.fn.coalesce(eb.fn.sum<number>('summarizer_output_tokens'), eb.lit(0)).as('output'),
      eb.fn.coalesce(eb.fn.max(eb.cast<number>('summarizer_usage_estimated', 'integer')), eb.lit(0)).as('estimated'),
    ])
    .where('agent_id', '=', agentId)
    .where('session_key', '=', sessionKey)
    .executeTakeFirstOrThrow();
  const calls = Number(row.calls);
  if (calls === 0) return null;
  const billing = {
    input: Number(row.input),
    cacheRead: Number(row.cache_read),
    cacheWrite: Number(row.cache_write),
    output: Number(row.output),
    ...(Number(row.estimated) > 0 ? { estimated: true as const } : {}),
  };
  return `compactions billed · ${calls} call${calls === 1 ? '' : 's'} · ${billingText(billing)}`;
}
