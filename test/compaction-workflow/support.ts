/** Helpers for compaction workflow tests: a seeded session, a summarizer fake, starting the workflow. */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { appendEntries } from '../../src/store/entries-repo';
import { ensureSession } from '../support/ensure-session';
import { estimateTokens } from '../../src/context/estimate-tokens';
import { extractIdentifiers } from '../../src/compaction/identifiers';
import type { Database } from '../../src/store/schema';
import type { AgentMessage, MessageEntry } from '../../src/context/types';
import { compactionWorkflowId, type CompactionWorkflowInput, type CompactionWorkflowResult } from '../../src/protocol';
import { fakeReply, type FakeRequest, type FakeStep } from '../../src/testing';
import type { KeelClient } from '../../src/client/keel-client';

/** A fresh agent per test: workflow ids never collide across tests or databases. */
export function freshAgent(): string {
  return `c${Math.random().toString(36).slice(2, 10)}`;
}

const FILLER =
  'we walked through the migration plan step by step and checked the logs of the staging run before moving on to the next part of the work';

/** The text of seeded message `i`: ~60 tokens of prose plus one planted identifier. */
export function seededText(i: number): string {
  return `Message ${i}: ${FILLER}. The file is /srv/app/module-${i}.ts and ${FILLER}.`;
}

export interface SeededSession {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  readonly entryIds: string[];
}

/** Creates the session row and appends `count` alternating user/assistant messages (ids m0, m1, …). */
export async function seedSession(db: Kysely<Database>, count: number, agentId = freshAgent()): Promise<SeededSession> {
  const sessionKey = `agent:${agentId}:main`;
  const session = await ensureSession(db, { agentId, sessionKey, newSessionId: randomUUID(), now: new Date() });
  const s = { agentId, sessionKey, sessionId: session.session_id, entryIds: [] as string[] };
  await appendMessages(db, s, 0, count);
  return s;
}

/** Appends messages `from` … `from + count − 1` to a seeded session. */
export async function appendMessages(
  db: Kysely<Database>,
  s: SeededSession,
  from: number,
  count: number,
): Promise<void> {
  const rows = [];
  for (let i = from; i < from + count; i++) {
    const message: AgentMessage =
      i % 2 === 0
        ? { role: 'user', content: seededText(i), timestamp: Date.UTC(2026, 0, 1, 10, i) }
        : {
            role: 'assistant',
            content: [{ type: 'text', text: seededText(i) }],
            stopReason: 'stop',
            timestamp: Date.UTC(2026, 0, 1, 10, i),
          };
    const id = `m${i}`;
    const entry: MessageEntry = {
      type: 'message',
      id,
      parentId: s.entryIds[s.entryIds.length - 1] ?? null,
      timestamp: new Date(Date.UTC(2026, 0, 1, 10, i)).toISOString(),
      message,
    };
    s.entryIds.push(id);
    rows.push({ entry, tokenEstimate: estimateTokens(message) });
  }
  await appendEntries(db, s.agentId, s.sessionId, rows);
}

/** The text of the user prompt of a summarizer request. */
export function promptOf(request: FakeRequest): string {
  const messages = request.body.messages ?? [];
  return JSON.stringify(messages.map((m) => m.content));
}

/** A summarizer that keeps every identifier it is shown (a model that follows the instructions). */
export function goodSummarizer(request: FakeRequest): FakeStep {
  const prompt = promptOf(request).replace(/\\n/g, '\n');
  const kind = prompt.includes('Merge them into ONE')
    ? 'Merged summary'
    : prompt.includes('lost identifiers')
      ? 'Revised summary'
      : 'Chunk summary';
  const ids = extractIdentifiers(prompt, 'strict');
  return fakeReply.text(`${kind}. Goal: finish the migration. Identifiers: ${ids.join(' ')}`);
}

/** Where a test starts a compaction workflow: a client of the dev server and the worker's task queue. */
export interface CompactionTarget {
  readonly client: KeelClient;
  readonly taskQueue: string;
}

/** Runs the compaction workflow to completion with the workflow id convention. */
export async function runCompaction(
  on: CompactionTarget,
  s: SeededSession,
  input: Partial<CompactionWorkflowInput> = {},
): Promise<CompactionWorkflowResult> {
  return startCompaction(on, s, input).then((h) => h.result());
}

/** Starts the compaction workflow and returns its handle. */
export async function startCompaction(
  on: CompactionTarget,
  s: SeededSession,
  input: Partial<CompactionWorkflowInput> = {},
) {
  const full: CompactionWorkflowInput = {
    agentId: s.agentId,
    sessionKey: s.sessionKey,
    sessionId: s.sessionId,
    trigger: 'threshold',
    compactionId: randomUUID(),
    contextWindowTokens: 200_000,
    keepRecentTokens: 200,
    ...input,
  };
  return on.client.temporal.workflow.start<(i: CompactionWorkflowInput) => Promise<CompactionWorkflowResult>>(
    'compactionWorkflow',
    {
      workflowId: compactionWorkflowId(s.agentId, s.sessionKey),
      taskQueue: on.taskQueue,
      args: [full],
      workflowIdConflictPolicy: 'USE_EXISTING',
    },
  );
}
