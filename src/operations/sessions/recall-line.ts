import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema';
import type { KeelSettings } from '../../config/agent-config';
import { agentConfig } from '../../config/agent-config';
import { recallSetting } from '../../embeddings/recall-setting';
import { sessionIdsOfKey } from '../../store/session-ids-repo';
import { vectorCoverage } from '../../store/embeddings-repo';

/**
 * What `keel status` says of a session's recall: hybrid with how many of its entries have vectors
 * (the rest are found by keywords until the worker embeds them), or keywords only and why, with the
 * setting to change.
 */
export async function sessionRecallLine(
  db: Kysely<Database>,
  settings: KeelSettings,
  agentId: string,
  sessionKey: string,
): Promise<string> {
  const setting = recallSetting(agentConfig(settings, agentId));
  if (setting.mode === 'keywords') return `recall: keywords only (${setting.why})`;
  const sessionIds = (await sessionIdsOfKey(db, agentId, sessionKey)).map((s) => s.sessionId);
  const { entries, withVectors } = await vectorCoverage(db, agentId, sessionIds, setting.endpoint.model);
  const waiting = entries - withVectors;
  return `recall: hybrid (${setting.endpoint.model}) · ${withVectors.toLocaleString('en-US')} of ${entries.toLocaleString('en-US')} entries have vectors${waiting > 0 ? ` (${waiting.toLocaleString('en-US')} found by keywords until embedded; \`keel embeddings backfill --session ${sessionKey}\` does it now)` : ''}`;
}
