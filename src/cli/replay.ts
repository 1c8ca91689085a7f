/**
 * `keel replay <sessionKey | file.jsonl>`: a recorded conversation played through Keel's context
 * path under the current configuration (or `--policy`) and optionally a second policy
 * (`--compare`), in process and read-only. Terminal summary on stderr, `--json` on stdout,
 * `--html` a self-contained report file.
 */
import { statSync, writeFileSync } from 'node:fs';
import { SingleBar, Presets } from 'cli-progress';
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema';
import type { KeelConfig } from '../config/keel-config';
import { parseSessionKey } from '../sessions/session-key';
import { currentReplayPolicy, readReplayPolicy, type ReplayPolicy } from '../replay/replay-policy';
import { fileTranscript, storedTranscript, type ReplayTranscript } from '../replay/replay-source';
import { runReplay, type ReplayReport } from '../replay/replay-report';
import { renderReplayText } from '../replay/replay-terminal';
import { renderReplayHtml } from '../replay/replay-html';
import { replayAdvice } from '../replay/replay-advice';
import { modelSummarizer } from '../replay/replay-summarizer';
import { summarizerModelFor } from '../runtime/activity-deps';

export interface ReplayCommandOptions {
  readonly policy?: string;
  readonly compare?: string;
  readonly html?: string;
  readonly json?: boolean;
  /** The agent, when the key does not name one. */
  readonly agent?: string;
}

/** A path to an existing file (or anything ending in .jsonl) is a transcript; anything else a session key. */
export function isTranscriptFile(source: string): boolean {
  return /\.jsonl$/i.test(source) || Boolean(statSync(source, { throwIfNoEntry: false })?.isFile());
}

/** The agent a session key belongs to: the key's own, else `--agent`, else main. */
export function replayAgentOf(sessionKey: string, fallback: string | undefined): string {
  try {
    return parseSessionKey(sessionKey).agentId ?? fallback ?? 'main';
  } catch {
    return fallback ?? 'main';
  }
}

/** The policies to replay: `--policy` (else the current configuration), then `--compare` when given. */
export function replayPolicies(config: KeelConfig, opts: ReplayCommandOptions, sessionKey?: string): ReplayPolicy[] {
  const first = opts.policy
    ? readReplayPolicy(opts.policy, config, sessionKey)
    : currentReplayPolicy(config, sessionKey);
  const policies = [first];
  if (opts.compare) {
    const second = readReplayPolicy(opts.compare, config, sessionKey);
    // Two files with the same name would share a legend label.
    policies.push(second.name === first.name ? { ...second, name: `${second.name} (compare)` } : second);
  }
  return policies;
}

/** Loads the transcript (the store only for a session key), replays it, prints or writes the report. */
export async function replayCommand(
  source: string,
  opts: ReplayCommandOptions,
  env: {
    readonly configFor: (agentId: string) => KeelConfig;
    readonly withDb: <T>(fn: (db: Kysely<Database>) => Promise<T>) => Promise<T>;
  },
): Promise<ReplayReport> {
  let transcript: ReplayTranscript;
  let config: KeelConfig;
  let agentId: string;
  if (isTranscriptFile(source)) {
    agentId = opts.agent ?? 'main';
    config = env.configFor(agentId);
    transcript = await fileTranscript(source);
  } else {
    agentId = replayAgentOf(source, opts.agent);
    config = env.configFor(agentId);
    transcript = await env.withDb((db) => storedTranscript(db, agentId, source));
  }
  const policies = replayPolicies(config, opts, transcript.sessionKey);
  // A live bar only on a terminal; pipes and logs get the summary alone.
  const bar = process.stderr.isTTY
    ? new SingleBar(
        { stream: process.stderr, format: '[{bar}] {value}/{total} turns replayed', hideCursor: true },
        Presets.shades_classic,
      )
    : undefined;
  let started = false;
  // Model summaries call the agent's summarizer (its compaction model, else its chat model).
  const summarizerModel = policies.some((p) => p.summarizer === 'model') ? summarizerModelFor(config) : undefined;
  const report = await runReplay(transcript, policies, {
    advice: replayAdvice(transcript, agentId, config),
    ...(summarizerModel ? { modelSummarizer: modelSummarizer(summarizerModel.client, summarizerModel.model) } : {}),
    onProgress: (done, total) => {
      if (!bar) return;
      if (!started) bar.start(total, done);
      else bar.update(done);
      started = true;
    },
  }).finally(() => bar?.stop());
  if (opts.html) {
    writeFileSync(opts.html, renderReplayHtml(report));
    process.stderr.write(`wrote the replay report to ${opts.html}\n`);
  } else if (!opts.json) {
    process.stderr.write(renderReplayText(report));
  }
  return report;
}
