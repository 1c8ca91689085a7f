/**
 * The replay operation `keel replay` runs: a recorded conversation (a stored session or a JSONL
 * transcript file) played through Keel's context path under the current configuration (or a policy
 * file) and optionally a second policy, in process and read-only.
 */
import { statSync } from 'node:fs';
import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema';
import type { KeelConfig } from '../../config/keel-config';
import { parseSessionKey } from '../../sessions/session-key';
import { currentReplayPolicy, readReplayPolicy, type ReplayPolicy } from '../../replay/replay-policy';
import { fileTranscript, storedTranscript, type ReplayTranscript } from '../../replay/replay-source';
import { runReplay, type ReplayReport } from '../../replay/replay-report';
import { replayAdvice } from '../../replay/replay-advice';
import { modelSummarizer } from '../../replay/replay-summarizer';
import { summarizerModelFor } from '../../runtime/activity-deps';

/** What a recorded replay reads: each agent's configuration, and the store (only for a session key). */
export interface RecordedReplayDeps {
  readonly configFor: (agentId: string) => KeelConfig;
  readonly withDb: <T>(fn: (db: Kysely<Database>) => Promise<T>) => Promise<T>;
}

/** A replay of `source`: a session key or a `.jsonl` file, under `policy` (a file; else the current configuration). */
export interface RecordedReplayInput {
  readonly source: string;
  readonly policy?: string | undefined;
  /** A second policy file, replayed and compared against the first. */
  readonly compare?: string | undefined;
  /** The agent, when the key does not name one (and whose configuration a file replays under). */
  readonly agent?: string | undefined;
  /** Turns replayed so far of all the policies' turns. */
  readonly onProgress?: (done: number, total: number) => void;
}

/** Loads the transcript, replays it under each policy, and returns the report. */
export async function replayRecorded(deps: RecordedReplayDeps, input: RecordedReplayInput): Promise<ReplayReport> {
  const { source } = input;
  const file = isTranscriptFile(source);
  const agentId = file ? (input.agent ?? 'main') : replayAgentOf(source, input.agent);
  // The agent's configuration first: an unknown agent is named before anything is read.
  const config = deps.configFor(agentId);
  const transcript: ReplayTranscript = file
    ? await fileTranscript(source)
    : await deps.withDb((db) => storedTranscript(db, agentId, source));
  const policies = replayPolicies(config, input, transcript.sessionKey);
  // Model summaries call the agent's summarizer (its compaction model, else its chat model).
  const summarizerModel = policies.some((p) => p.summarizer === 'model') ? summarizerModelFor(config) : undefined;
  return runReplay(transcript, policies, {
    advice: replayAdvice(transcript, agentId, config),
    ...(summarizerModel ? { modelSummarizer: modelSummarizer(summarizerModel.client, summarizerModel.model) } : {}),
    ...(input.onProgress ? { onProgress: input.onProgress } : {}),
  });
}

/** A path to an existing file (or anything ending in .jsonl) is a transcript; anything else a session key. */
function isTranscriptFile(source: string): boolean {
  return /\.jsonl$/i.test(source) || Boolean(statSync(source, { throwIfNoEntry: false })?.isFile());
}

/** The agent a session key belongs to: the key's own, else `--agent`, else main. */
function replayAgentOf(sessionKey: string, fallback: string | undefined): string {
  try {
    return parseSessionKey(sessionKey).agentId ?? fallback ?? 'main';
  } catch {
    return fallback ?? 'main';
  }
}

/** The policies to replay: `policy` (else the current configuration), then `compare` when given. */
function replayPolicies(config: KeelConfig, input: RecordedReplayInput, sessionKey?: string): ReplayPolicy[] {
  const first = input.policy
    ? readReplayPolicy(input.policy, config, sessionKey)
    : currentReplayPolicy(config, sessionKey);
  const policies = [first];
  if (input.compare) {
    const second = readReplayPolicy(input.compare, config, sessionKey);
    // Two files with the same name would share a legend label.
    policies.push(second.name === first.name ? { ...second, name: `${second.name} (compare)` } : second);
  }
  return policies;
}
