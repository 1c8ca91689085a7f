import type { ActivityDeps } from '../src/runtime/deps';
import { getSession } from '../src/store/sessions-repo';

/** The model a session's turns call: its override (`keel session model`), else its agent's model. */
export async function sessionModel(deps: ActivityDeps, agentId: string, sessionKey: string): Promise<string> {
  const session = await getSession(deps.db, agentId, sessionKey);
  return session?.model_override ?? deps.config.model;
}
