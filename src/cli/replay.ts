/**
 * `keel replay <sessionKey | file.jsonl>`: presents the recorded replay (`replayRecorded`): a
 * progress bar and the terminal summary on stderr, `--json` on stdout, `--html` a self-contained
 * report file.
 */
import { writeFileSync } from 'node:fs';
import { SingleBar, Presets } from 'cli-progress';
import type { ReplayReport } from '../replay/replay-report';
import { renderReplayText } from '../replay/replay-terminal';
import { renderReplayHtml } from '../replay/replay-html';
import { replayRecorded, type RecordedReplayDeps } from '../operations/replay/replay-recorded';

export interface ReplayCommandOptions {
  readonly policy?: string;
  readonly compare?: string;
  readonly html?: string;
  readonly json?: boolean;
  /** The agent, when the key does not name one. */
  readonly agent?: string;
}

/** Replays `source` with a live bar on a terminal, then prints or writes the report. */
export async function replayCommand(
  source: string,
  opts: ReplayCommandOptions,
  deps: RecordedReplayDeps,
): Promise<ReplayReport> {
  // A live bar only on a terminal; pipes and logs get the summary alone.
  const bar = process.stderr.isTTY
    ? new SingleBar(
        { stream: process.stderr, format: '[{bar}] {value}/{total} turns replayed', hideCursor: true },
        Presets.shades_classic,
      )
    : undefined;
  let started = false;
  const report = await replayRecorded(deps, {
    source,
    policy: opts.policy,
    compare: opts.compare,
    agent: opts.agent,
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
