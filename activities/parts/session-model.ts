import type { ActivityDeps } from '../../src/runtime/deps';
import type { SessionRow } from '../../src/store/schema';

/** The model a session's turns call: its override (`keel session model`), else its agent's model. */
export function modelOf(deps: ActivityDeps, session: SessionRow | undefined): string {
  return session?.model_override ?? deps.config.model;
}
