/**
 * Helpers for the durable-turn proofs (test/turn-durable): a model responder that plays the
 * conversation, the memory flush and the summarizer; Temporal history measurements; seeding.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { temporal } from '@temporalio/proto';
import type { Client } from '@temporalio/client';
import { appendEntries } from '../../src/store/entries-repo';
import { ensureSession } from './ensure-session';
import { estimateTokens } from '../../src/context/estimate-tokens';
import type { Database } from '../../src/store/schema';
import type { AgentMessage, MessageEntry } from '../../src/context/types';
import { goodSummarizer } from '../compaction-workflow/support';
import { fakeReply, type FakeRequest, type FakeStep } from '../../src/testing';

/** A fresh agent per test: session workflow ids never collide across tests or databases. */
export function freshDurableAgent(): string {
  return `d${Math.random().toString(36).slice(2, 10)}`;
}

/** A sentence of everyday working detail (~35 tokens), none of the kinds a summary must keep verbatim (decisions, errors, …). */
const WORK_DETAIL =
  'We read through the staging logs of the morning run and compared the numbers with the dashboards of last week, line by line, to see how the traffic moved.';

/**
 * `text` followed by some sentences of working detail, as a real message has: a summary of a few such
 * messages is smaller than they are, so a compaction of them reclaims tokens (one of "hi" cannot).
 * Best for replies: a summary quotes the last user request, so a long last request stays long.
 */
export function realisticMessage(text: string, sentences = 8): string {
  return `${text} ${Array.from({ length: sentences }, () => WORK_DETAIL).join(' ')}`;
}

/** The flush prompt's opening words (src/turn/memory-flush.ts). */
export const FLUSH_MARKER = 'Pre-compaction memory flush';

/** True for a summarizer call of the compaction workflow (its system prompt, or its request after the conversation). */
export function isSummarizerRequest(request: FakeRequest): boolean {
  return (
    JSON.stringify(request.body.system ?? '').includes('context checkpoint summaries') ||
    isSummaryOnConversationRequest(request)
  );
}

/** True for a summary asked on the conversation's own prompt cache (its last message asks for it). */
export function isSummaryOnConversationRequest(request: FakeRequest): boolean {
  const messages = request.body.messages ?? [];
  return JSON.stringify(messages[messages.length - 1]?.content ?? '').includes('<summary-request>');
}

/** True for the silent memory-flush turn (the flush prompt is in its messages). */
export function isFlushRequest(request: FakeRequest): boolean {
  return !isSummarizerRequest(request) && JSON.stringify(request.body.messages ?? []).includes(FLUSH_MARKER);
}

/** The last message's content blocks (Anthropic wire shape). */
function lastBlocks(request: FakeRequest): Array<{ type: string; [k: string]: any }> {
  const messages = request.body.messages ?? [];
  const last = messages[messages.length - 1];
  if (!last) return [];
  return typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : last.content;
}

/** True when the request answers tool calls (the last message carries tool_result blocks). */
export function endsWithToolResult(request: FakeRequest): boolean {
  return lastBlocks(request).some((b) => b.type === 'tool_result');
}

/**
 * The memory flush as a well-behaved agent plays it: one memory_write call, then NO_REPLY.
 * `onNote` sees each note written.
 */
export function flushStep(request: FakeRequest, note: string): FakeStep {
  if (endsWithToolResult(request)) return fakeReply.text('NO_REPLY');
  return fakeReply.toolUse([{ id: `toolu_flush_${request.index}`, name: 'memory_write', input: { text: note } }]);
}

/**
 * A responder that routes summarizer calls to a summarizer that keeps identifiers, flush calls to
 * `flushStep`, and every other call (the conversation) to `main`.
 */
export function routedResponder(
  main: (request: FakeRequest) => FakeStep,
  note = (r: FakeRequest) => `durable note ${r.index}`,
) {
  return (request: FakeRequest): FakeStep => {
    if (isSummarizerRequest(request)) return goodSummarizer(request);
    if (isFlushRequest(request)) return flushStep(request, note(request));
    return main(request);
  };
}

/** The text of the most recent plain user message ("turn 7"), skipping tool results. */
export function lastUserText(request: FakeRequest): string {
  const messages = request.body.messages ?? [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    const texts = (m.content as Array<{ type: string; text?: string }>)
      .filter((b) => b.type === 'text')
      .map((b) => b.text ?? '');
    if (texts.length > 0) return texts.join('');
  }
  return '';
}

/** Every Temporal Payload's data size in a history (walks all event attributes). */
export function payloadSizes(history: temporal.api.history.v1.IHistory): number[] {
  const sizes: number[] = [];
  const seen = new Set<unknown>();
  const walk = (value: unknown): void => {
    if (value === null || typeof value !== 'object' || seen.has(value)) return;
    seen.add(value);
    if (value instanceof Uint8Array) return;
    const v = value as Record<string, unknown>;
    if (v.data instanceof Uint8Array && 'metadata' in v) {
      sizes.push(v.data.length);
      return;
    }
    for (const child of Object.values(v)) walk(child);
  };
  for (const event of history.events ?? []) walk(event);
  return sizes;
}

/** The encoded size in bytes of a workflow's current run history. */
export async function historyBytes(client: Client, workflowId: string): Promise<number> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  return temporal.api.history.v1.History.encode(history).finish().length;
}

/** Creates a session row and appends `count` alternating user/assistant messages of ~`words` words. */
export async function seedConversation(
  db: Kysely<Database>,
  agentId: string,
  sessionKey: string,
  count: number,
  words = 40,
): Promise<{ sessionId: string; lastEntryId: string }> {
  const session = await ensureSession(db, { agentId, sessionKey, newSessionId: randomUUID(), now: new Date() });
  const filler = Array.from({ length: words }, (_, i) => `word${i % 7}`).join(' ');
  let parentId: string | null = null;
  const BATCH = 250;
  for (let from = 0; from < count; from += BATCH) {
    const rows = [];
    for (let i = from; i < Math.min(count, from + BATCH); i++) {
      const at = Date.UTC(2026, 0, 1, 0, 0, i);
      const message: AgentMessage =
        i % 2 === 0
          ? { role: 'user', content: `seeded question ${i}: ${filler}`, timestamp: at }
          : {
              role: 'assistant',
              content: [{ type: 'text', text: `seeded answer ${i}: ${filler}` }],
              stopReason: 'stop',
              timestamp: at,
            };
      const id: string = `seed-${i}`;
      const entry: MessageEntry = { type: 'message', id, parentId, timestamp: new Date(at).toISOString(), message };
      parentId = id;
      rows.push({ entry, tokenEstimate: estimateTokens(message) });
    }
    await appendEntries(db, agentId, session.session_id, rows);
  }
  return { sessionId: session.session_id, lastEntryId: parentId ?? '' };
}

/** Polls the session's status until no turn or maintenance is queued. */
export async function waitIdle(getStatus: () => Promise<{ queuedTurns: number }>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if ((await getStatus()).queuedTurns === 0) return;
    if (Date.now() > deadline) throw new Error(`session still busy after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** One step of a session's history that matters for maintenance, in history order. */
export type MaintenanceEvent =
  | {
      readonly kind: 'finishTurn';
      readonly contextTokens: number;
      readonly contextWindow: number;
      readonly compact: boolean;
      readonly memoryFlush: boolean;
    }
  | { readonly kind: 'overBudget' }
  | { readonly kind: 'compactionStarted' };

function decodeJson(payload: temporal.api.common.v1.IPayload | undefined | null): unknown {
  if (!payload?.data || payload.data.length === 0) return undefined;
  try {
    return JSON.parse(Buffer.from(payload.data).toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * Reads, in order, every turn's finish (a finishTurn local-activity marker, or the `finished` of the
 * turn's last callModel), every `callModel` that
 * answered `overBudget` (mid-turn precheck) and every compaction child started.
 */
export function maintenanceTimeline(history: temporal.api.history.v1.IHistory): MaintenanceEvent[] {
  const out: MaintenanceEvent[] = [];
  for (const event of history.events ?? []) {
    const finished = (result: Record<string, unknown> | undefined): void => {
      if (result && typeof result === 'object' && 'compact' in result && 'contextTokens' in result) {
        out.push({
          kind: 'finishTurn',
          contextTokens: Number(result.contextTokens),
          contextWindow: Number(result.contextWindow),
          compact: Boolean(result.compact),
          memoryFlush: Boolean(result.memoryFlush),
        });
      }
    };
    const marker = event.markerRecordedEventAttributes;
    if (marker) finished(decodeJson(marker.details?.result?.payloads?.[0]) as Record<string, unknown> | undefined);
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed) {
      const result = decodeJson(completed.result?.payloads?.[0]) as Record<string, unknown> | undefined;
      if (result && typeof result === 'object' && result.kind === 'overBudget') out.push({ kind: 'overBudget' });
      // A turn's last model call finishes the turn (sessions on the finish-in-model-call patch).
      if (result && typeof result === 'object' && result.finished) finished(result.finished as Record<string, unknown>);
    }
    if (event.startChildWorkflowExecutionInitiatedEventAttributes) out.push({ kind: 'compactionStarted' });
  }
  return out;
}

/**
 * How each run of a session workflow admitted its requests: by the `awaitResult` Update that carries
 * the request (Update-with-Start) or by the `enqueue` Signal (the fallback past the in-flight limit).
 */
export async function admissionKinds(
  client: Client,
  workflowId: string,
): Promise<{ byUpdate: number; bySignal: number }> {
  const counts = { byUpdate: 0, bySignal: 0 };
  for await (const run of client.workflow.list({ query: `WorkflowId = "${workflowId}"` })) {
    const history = await client.workflow.getHandle(workflowId, run.runId).fetchHistory();
    for (const event of history.events ?? []) {
      if (event.workflowExecutionSignaledEventAttributes?.signalName === 'enqueue') counts.bySignal += 1;
      const update = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input;
      if (update?.name !== 'awaitResult') continue;
      const arg = JSON.parse(Buffer.from(update.args?.payloads?.[0]?.data ?? []).toString('utf8')) as {
        request?: unknown;
      };
      if (arg.request) counts.byUpdate += 1;
    }
  }
  return counts;
}
