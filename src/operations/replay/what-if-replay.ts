/**
 * The replay operation the console runs: a stored session replayed under its agent's configuration
 * and an edited policy, side by side, read-only and without spending on the provider.
 */
import type { Kysely } from 'kysely';
import type { KeelClient } from '../../client/keel-client';
import { agentConfig, type KeelSettings } from '../../config/agent-config';
import { replayAdvice } from '../../replay/replay-advice';
import { currentReplayPolicy, parseReplayPolicy, ReplayPolicyError } from '../../replay/replay-policy';
import { runReplay, type ReplayReport } from '../../replay/replay-report';
import { ReplaySourceError, storedTranscript } from '../../replay/replay-source';
import type { Database } from '../../store/schema';
import { InvalidOperationInputError, UnknownSessionError } from '../errors';

/** What a what-if replay reads: the session's agent (by the client's key rules), its config and its stored transcript. */
export interface ReplayDeps {
  readonly client: KeelClient;
  readonly db: Kysely<Database>;
  readonly settings: KeelSettings;
}

/**
 * Replays the session under its current policy and `policy` (a replay policy object, as `keel
 * replay --policy` reads from a file). A policy that asks for model summaries is refused: a page view
 * must not spend on the provider (`keel replay` runs those).
 */
export async function whatIfReplay(
  deps: ReplayDeps,
  input: { readonly sessionKey: string; readonly policy: unknown },
): Promise<ReplayReport> {
  const { sessionKey } = input;
  const { agentId } = deps.client.identify(sessionKey);
  const config = agentConfig(deps.settings, agentId);
  let edited;
  try {
    edited = parseReplayPolicy(input.policy, config, { source: '(the console)', defaultName: 'what-if', sessionKey });
  } catch (err) {
    throw err instanceof ReplayPolicyError ? new InvalidOperationInputError('policy', err.message) : err;
  }
  if (edited.summarizer === 'model')
    throw new InvalidOperationInputError(
      'policy',
      'policy.summarizer: "model" spends on the provider; use `keel replay` for it, or "extractive"',
    );
  const transcript = await storedTranscript(deps.db, agentId, sessionKey).catch((err: unknown) => {
    throw err instanceof ReplaySourceError ? new UnknownSessionError(sessionKey, err.message) : err;
  });
  const current = currentReplayPolicy(config, sessionKey);
  const policies =
    edited.name === current.name ? [current, { ...edited, name: `${edited.name} (edited)` }] : [current, edited];
  return runReplay(transcript, policies, { advice: replayAdvice(transcript, agentId, config) });
}
