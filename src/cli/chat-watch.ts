import type { KeelClient } from '../client/keel-client';
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

/**
 * While a turn runs: says on one line why it waits when a step of it is failing and being retried
 * (`model unreachable at http://127.0.0.1:9 (ANTHROPIC_BASE_URL): …; retrying — Ctrl-C to cancel`),
 * once per distinct failure, from the retrying activity's last failure that Temporal keeps.
 */
export function watchRetries(client: KeelClient, sessionKey: string, log: (line: string) => void): { stop(): void } {
  let said = '';
  return every(POLL_MS, async () => {
    const step = await client.retryingStep(sessionKey);
    const failure = step?.lastFailure.split('\n')[0]!.slice(0, 300);
    if (!failure || failure === said) return;
    said = failure;
    log(`${failure}; retrying — Ctrl-C to cancel`);
  });
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
