/**
 * What `keel status` says when a session's window is not the configured one: the provider's limit
 * Keel learned for the model, and the session's estimate scale for it. `status` shows the window in
 * force beside the configured one; this says why they differ and what restores the window.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema';
import { estimateScaleFor } from '../../store/model-limits-repo';
import { DEFAULTS } from '../../config/defaults';

/** The note, or null when nothing learned narrows the session's window for `model`. */
export async function sessionWindowNote(
  db: Kysely<Database>,
  agentId: string,
  sessionKey: string,
  model: string,
): Promise<string | null> {
  const [limit, session] = await Promise.all([
    db
      .selectFrom('model_limits')
      .select(['context_window', 'provider_max_tokens'])
      .where('model', '=', model)
      .executeTakeFirst(),
    db
      .selectFrom('sessions')
      .select('estimate_scales')
      .where('agent_id', '=', agentId)
      .where('session_key', '=', sessionKey)
      .executeTakeFirst(),
  ]);
  const scale = estimateScaleFor(session, model);
  const parts: string[] = [];
  if (limit) {
    const said =
      limit.provider_max_tokens !== null
        ? `the provider's stated maximum ${limit.provider_max_tokens.toLocaleString('en-US')} less ${Math.round((1 - DEFAULTS.learnedWindowSafety) * 100)}%`
        : 'under what the provider refused';
    parts.push(`${model} is limited to ${limit.context_window.toLocaleString('en-US')} tokens (${said})`);
  }
  if (scale !== undefined) {
    parts.push(
      `this session gets ${Math.round(scale * 100)}% of it: the provider counts its content denser than Keel's estimate (a large reply measured lighter, or /new, restores it)`,
    );
  }
  return parts.length > 0 ? `window: ${parts.join('; ')}` : null;
}
