import type { KeelClient, RetryingStep } from '../client/keel-client';
import { announcingSubagent } from '../protocol';

/** How often the chat asks Temporal about a running turn's retries, and the session about replies nobody asked for. */
const POLL_MS = 1_000;

/** A poll loop that runs until `stop()`; a failing poll is skipped (the session may not exist yet). */
function every(intervalMs: number, poll: () => Promise<void>): { stop(): void } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = async () => {
    await poll().catch(() => undefined);
    if (!stopped) timer = setTimeout(() => void tick(), intervalMs);
  };
  timer = setTimeout(() => void tick(), intervalMs);
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/** While a step keeps failing on one attempt, the chat says it again this often (a long backoff is not silence). */
const RETRY_LINE_EVERY_MS = 15_000;

/**
 * While a turn runs: says on one line why it waits when a step of it is failing and being retried
 * (`model unreachable at http://127.0.0.1:9 (ANTHROPIC_BASE_URL): …; attempt 3, next try in 4 s, 4 min
 * 50 s of the retry budget left; retrying — Ctrl-C to cancel`), from the retrying activity's state that
 * Temporal keeps: again at each attempt, and every {@link RETRY_LINE_EVERY_MS} between them.
 */
export function watchRetries(client: KeelClient, sessionKey: string, log: (line: string) => void): { stop(): void } {
  let said = { attempt: 0, at: 0 };
  return every(POLL_MS, async () => {
    const step = await client.retryingStep(sessionKey);
    const now = Date.now();
    if (!step || (step.attempt === said.attempt && now - said.at < RETRY_LINE_EVERY_MS)) return;
    said = { attempt: step.attempt, at: now };
    log(retryLine(step, new Date(now)));
  });
}

/** One retry line: the failure, the attempt, when the next one starts and what is left of the budget. */
export function retryLine(step: RetryingStep, now: Date): string {
  const failure = step.lastFailure.split('\n')[0]!.slice(0, 300);
  const figures = [
    `attempt ${step.attempt}${step.maximumAttempts ? ` of ${step.maximumAttempts}` : ''}`,
    step.nextAttemptAt ? `next try in ${duration(step.nextAttemptAt.getTime() - now.getTime())}` : 'trying now',
    ...(step.budgetEndsAt ? [`${duration(step.budgetEndsAt.getTime() - now.getTime())} of the retry budget left`] : []),
  ];
  return `${failure}; ${figures.join(', ')}; retrying — Ctrl-C to cancel`;
}

/** A wait in whole seconds, with minutes past one (`4 s`, `4 min 50 s`); never negative. */
function duration(ms: number): string {
  const seconds = Math.max(0, Math.ceil(ms / 1000));
  return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/** A session's answer to its subagent's report, which nobody asked for (so nobody waits for it). */
export interface AnnounceReply {
  readonly requestId: string;
  readonly subagentId: string;
  /** The answer; undefined when it was silent. */
  readonly reply?: string;
  /** Why the answer failed, when it did. */
  readonly failed?: string;
}

/**
 * Collects the session's settled answers to subagents' announces that nobody has collected yet
 * (each is handed out once: collecting marks it). A session that is not running has none.
 */
export async function collectAnnounceReplies(client: KeelClient, sessionKey: string): Promise<AnnounceReply[]> {
  // A closed run answers queries only by being replayed on the worker: ask the server first (cheap).
  const handle = client.temporal.workflow.getHandle(client.identify(sessionKey).workflowId);
  if ((await handle.describe()).status.name !== 'RUNNING') return [];
  const status = await client.getStatus(sessionKey);
  const replies: AnnounceReply[] = [];
  for (const requestId of status.uncollectedRequestIds ?? []) {
    const subagentId = announcingSubagent(requestId);
    if (!subagentId) continue;
    const outcome = await client.collectOutcome(sessionKey, requestId);
    if (outcome.status === 'done' && 'turn' in outcome)
      replies.push({
        requestId,
        subagentId,
        ...(outcome.turn.silent || !outcome.turn.reply ? {} : { reply: outcome.turn.reply }),
      });
    else if (outcome.status === 'failed') replies.push({ requestId, subagentId, failed: outcome.message });
  }
  return replies;
}

/**
 * While the chat waits for input: collects the parent's replies to subagents' announces (turns
 * nobody sent, so nobody waits for them) and hands each to `show` as it arrives.
 */
export function watchAnnounces(
  client: KeelClient,
  sessionKey: string,
  show: (subagentId: string, reply: string | undefined) => void,
): { stop(): void } {
  return every(POLL_MS, async () => {
    for (const answer of await collectAnnounceReplies(client, sessionKey)) {
      show(answer.subagentId, answer.failed !== undefined ? `(the reply failed: ${answer.failed})` : answer.reply);
    }
  });
}
