/**
 * A threshold compaction's cost, summary asked on the conversation's own prompt cache against today's
 * summarizer prompt: two identical ~100k-token sessions with planted identifiers and decisions, each
 * taken over its threshold by one turn through the real durable path (fake Anthropic API, which bills
 * a repeated prefix as a cache read), one worker with `compactionPromptCache` on and one with it off.
 * Billed input-token equivalents per compaction at Anthropic's price ratios (uncached input × 1,
 * cache writes × 1.25, cache reads × 0.1), and which planted facts each summary kept.
 *
 *   npx ts-node --swc bench/compaction-cache.ts      # BENCH_COMPACTION_TOKENS (default 100,000)
 *
 * Prints one JSON object on stdout (people-text on stderr); `run()` returns the same object.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { openStore, type Store } from '../src/store/connect';
import { appendEntries } from '../src/store/entries-repo';
import { estimateTokens } from '../src/context/estimate-tokens';
import type { AgentMessage, MessageEntry } from '../src/context/types';
import { fakeReply, startFakeAnthropic, type FakeRequest } from '../src/testing/fake-anthropic';
import { testDeps } from '../test/support/keel-deps';
import { ensureSession } from '../test/support/ensure-session';
import { isFlushRequest, isSummarizerRequest, lastUserText, waitIdle } from '../test/support/durable-turn-helpers';
import {
  keelClient,
  runInProcessWorker,
  startTemporalTestEnv,
  uniqueTaskQueue,
  type TemporalTestEnv,
} from '../test/support/temporal';
import { resolveReserveTokens } from '../src/context/context-window';
import { runMain } from './support/run-main';

const CACHE_WRITE_PRICE = 1.25;
const CACHE_READ_PRICE = 0.1;
const DEFAULT_TOKENS = 100_000;
/** The target: a compaction on the cache is billed at most this share of today's prompt. */
const TARGET_RATIO = 0.2;
/** Tokens between the turn's prompt and the threshold: the turn's answer carries the context over it. */
const THRESHOLD_MARGIN = 600;

/** Identifiers and decisions planted across the session: a summary must keep every one. */
const PLANTED = [
  'Dana Whitfield is our DBA and approves every schema change; her ticket queue is OPS-4471.',
  'The nightly export failed because the disk on replica db-report-3.internal filled up.',
  "Let's decide: use advisory locks per account instead of SERIALIZABLE. Write that down.",
  'The compliance report is due by Friday, March 13; the draft lives at /srv/reports/compliance-q1.md.',
  'From now on, never run migrations during business hours.',
  'Deploy build 7f3c9e2a from branch release/2026.11 to host build-7.example.net.',
];
/** The identifiers among them (the quality guard's kind). */
const PLANTED_IDS = [
  'OPS-4471',
  'db-report-3.internal',
  '/srv/reports/compliance-q1.md',
  '7f3c9e2a',
  'release/2026.11',
  'build-7.example.net',
];

export interface CompactionCost {
  readonly calls: number;
  readonly input: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  readonly output: number;
  /** input + cache writes × 1.25 + cache reads × 0.1. */
  readonly billedInput: number;
  /** Planted identifiers and decisions the compacted context still holds (in the summary or the kept tail). */
  readonly identifiersKept: number;
  readonly decisionsKept: number;
}

export interface CompactionCacheResult {
  readonly sessionTokens: number;
  readonly onCache: CompactionCost;
  readonly todaysPrompt: CompactionCost;
  /** onCache.billedInput / todaysPrompt.billedInput: lower is better. */
  readonly ratio: number;
  readonly targetRatio: number;
  readonly meetsTarget: boolean;
  readonly plantedIdentifiers: number;
  readonly plantedDecisions: number;
}

const log = (line: string) => process.stderr.write(`${line}\n`);

/** A summarizer that follows its instructions: it keeps every planted fact and identifier its prompt shows. */
function summarizer(request: FakeRequest) {
  const prompt = JSON.stringify(request.body.messages ?? []);
  const facts = PLANTED.filter((p) => prompt.includes(p.replace(/"/g, '\\"')));
  return fakeReply.text(
    `## Goal\nKeep the deployment and the reports on track.\n\n## Decisions (with rationale)\n${facts.map((f) => `- ${f}`).join('\n')}\n\n## Critical context\nAll routine checks were done.`,
  );
}

/** A session of about `tokens` tokens of routine exchanges with the planted facts spread across it. */
async function seedSession(store: Store, agentId: string, sessionKey: string, tokens: number): Promise<number> {
  const session = await ensureSession(store.db, { agentId, sessionKey, newSessionId: randomUUID(), now: new Date() });
  const routine = (i: number) =>
    `Exchange ${i}: checked the queue metrics for shard ${i % 40} and the replica lag; everything was within bounds and the logs showed no errors worth a note today.`;
  const rows: Array<{ entry: MessageEntry; tokenEstimate: number }> = [];
  let total = 0;
  let parentId: string | null = null;
  for (let i = 0; total < tokens; i++) {
    const at = Date.UTC(2026, 10, 1, 8, 0, i);
    const text = routine(i);
    const message: AgentMessage =
      i % 2 === 0
        ? { role: 'user', content: text, timestamp: at }
        : { role: 'assistant', content: [{ type: 'text', text }], stopReason: 'stop', timestamp: at };
    const entry: MessageEntry = {
      type: 'message',
      id: `seed-${i}`,
      parentId,
      timestamp: new Date(at).toISOString(),
      message,
    };
    const tokenEstimate = estimateTokens(message);
    rows.push({ entry, tokenEstimate });
    total += tokenEstimate;
    parentId = entry.id;
  }
  // Spread the planted facts over the whole session, not only its start.
  const step = Math.floor(rows.length / PLANTED.length);
  PLANTED.forEach((fact, k) => {
    const row = rows[k * step + 1]!;
    const message = row.entry.message;
    const text = `${routine(k * step + 1)} ${fact}`;
    row.entry = {
      ...row.entry,
      message:
        message.role === 'user'
          ? { ...message, content: text }
          : ({ ...message, content: [{ type: 'text', text }] } as AgentMessage),
    };
    row.tokenEstimate = estimateTokens(row.entry.message);
  });
  await appendEntries(store.db, agentId, session.session_id, rows);
  return rows.reduce((n, r) => n + r.tokenEstimate, 0);
}

const QUESTION = 'walk me through the deployment';
const ANSWER = `Here is the walkthrough. ${'The build is promoted, the health checks pass, and traffic moves over in stages. '.repeat(60)}`;

/** Answers turns: the long answer to the question that crosses the threshold, a short one otherwise. */
function responder(request: FakeRequest) {
  if (isSummarizerRequest(request)) return summarizer(request);
  if (isFlushRequest(request)) return fakeReply.text('NO_REPLY');
  return fakeReply.text(lastUserText(request) === QUESTION ? ANSWER : 'Noted.');
}

/** The prompt tokens (Keel's estimate) of the question's turn on this history: measured on a throwaway session with a wide window. */
async function promptTokensOfQuestion(
  env: TemporalTestEnv,
  store: Store,
  fakeUrl: string,
  tokens: number,
): Promise<number> {
  const queue = uniqueTaskQueue('bench-compaction-probe');
  const worker = await runInProcessWorker(
    env,
    queue,
    testDeps(store, fakeUrl, { config: { contextWindowTokens: tokens * 4 } }),
  );
  try {
    const agent = `probe${randomBytes(4).toString('hex')}`;
    const key = `agent:${agent}:main`;
    await seedSession(store, agent, key, tokens);
    const client = keelClient(env, queue);
    await client.sendMessage(key, 'hello again');
    await client.sendMessage(key, QUESTION);
    const status = await client.getStatus(key);
    return status.contextTokens - estimateTokens({ role: 'assistant', content: [{ type: 'text', text: ANSWER }] });
  } finally {
    await worker.stop();
  }
}

/** One session on a worker with `compactionPromptCache` set: seeded, a short turn, then the turn that crosses the threshold. */
async function compactOnce(
  env: TemporalTestEnv,
  store: Store,
  fakeUrl: string,
  tokens: number,
  window: number,
  onCache: boolean,
): Promise<CompactionCost> {
  const queue = uniqueTaskQueue(onCache ? 'bench-compaction-cache' : 'bench-compaction-prompt');
  const worker = await runInProcessWorker(
    env,
    queue,
    testDeps(store, fakeUrl, { config: { contextWindowTokens: window, compactionPromptCache: onCache } }),
  );
  try {
    const agent = `bench${randomBytes(4).toString('hex')}`;
    const key = `agent:${agent}:main`;
    await seedSession(store, agent, key, tokens);
    const client = keelClient(env, queue);
    await client.sendMessage(key, 'hello again');
    await client.sendMessage(key, QUESTION);
    await waitIdle(() => client.getStatus(key));
    const row = await store.db.selectFrom('compactions').selectAll().where('agent_id', '=', agent).executeTakeFirst();
    if (row?.status !== 'succeeded' || row.entry_id === null)
      throw new Error(
        `the ${onCache ? 'cache' : 'prompt'} session did not compact (${row?.status ?? 'no compaction'})`,
      );
    const entry = await store.db
      .selectFrom('transcript_entries')
      .select('payload')
      .where('agent_id', '=', agent)
      .where('id', '=', row.entry_id)
      .executeTakeFirstOrThrow();
    // What the context holds after the compaction: the summary, and the tail it kept verbatim.
    const summary = String((entry.payload as { summary?: unknown }).summary ?? '');
    const firstKept = await store.db
      .selectFrom('transcript_entries')
      .select('seq')
      .where('agent_id', '=', agent)
      .where('id', '=', row.first_kept_entry_id ?? '')
      .executeTakeFirst();
    const tail = firstKept
      ? await store.db
          .selectFrom('transcript_entries')
          .select('payload')
          .where('agent_id', '=', agent)
          .where('seq', '>=', firstKept.seq)
          .execute()
      : [];
    const context = [summary, ...tail.map((t) => JSON.stringify(t.payload))].join('\n');
    const cost = {
      input: row.summarizer_input_tokens,
      cacheRead: row.summarizer_cache_read_tokens,
      cacheWrite: row.summarizer_cache_write_tokens,
      output: row.summarizer_output_tokens,
    };
    return {
      calls: row.summarizer_calls,
      ...cost,
      billedInput: Math.round(cost.input + cost.cacheWrite * CACHE_WRITE_PRICE + cost.cacheRead * CACHE_READ_PRICE),
      identifiersKept: PLANTED_IDS.filter((id) => context.includes(id)).length,
      decisionsKept: PLANTED.filter((fact) => context.includes(fact.replace(/"/g, '\\"')) || summary.includes(fact))
        .length,
    };
  } finally {
    await worker.stop();
  }
}

export async function run(opts: { tokens?: number; quick?: boolean } = {}): Promise<CompactionCacheResult> {
  const tokens = opts.tokens ?? (Number(process.env.BENCH_COMPACTION_TOKENS) || (opts.quick ? 30_000 : DEFAULT_TOKENS));
  log(
    `compaction-cache: a ${tokens.toLocaleString('en-US')}-token session, compacted with the summary on the prompt cache and with today's prompt…`,
  );
  const [env, fake, store] = await Promise.all([
    startTemporalTestEnv(),
    startFakeAnthropic(),
    openStore({ kind: 'pglite', dataDir: 'memory://' }),
  ]);
  fake.respondWith(responder);
  try {
    // The window puts the threshold just above the question's prompt: its answer carries the context over.
    const window =
      (await promptTokensOfQuestion(env, store, fake.url, tokens)) + THRESHOLD_MARGIN + resolveReserveTokens();
    const onCache = await compactOnce(env, store, fake.url, tokens, window, true);
    const todaysPrompt = await compactOnce(env, store, fake.url, tokens, window, false);
    const ratio = Math.round((onCache.billedInput / todaysPrompt.billedInput) * 1000) / 1000;
    return {
      sessionTokens: tokens,
      onCache,
      todaysPrompt,
      ratio,
      targetRatio: TARGET_RATIO,
      meetsTarget: ratio <= TARGET_RATIO,
      plantedIdentifiers: PLANTED_IDS.length,
      plantedDecisions: PLANTED.length,
    };
  } finally {
    fake.respondWith(undefined);
    await fake.close();
    await store.close();
    await env.close();
  }
}

export function ratioLines(r: CompactionCacheResult): string[] {
  const kept = (c: CompactionCost) =>
    `${c.identifiersKept}/${r.plantedIdentifiers} identifiers, ${c.decisionsKept}/${r.plantedDecisions} decisions kept`;
  return [
    `billed input per compaction of a ${r.sessionTokens.toLocaleString('en-US')}-token session, on the prompt cache / today's prompt: ${r.onCache.billedInput} / ${r.todaysPrompt.billedInput} = ${r.ratio}× (target ≤ ${r.targetRatio}×: ${r.meetsTarget ? 'met' : 'NOT met'})`,
    `on the cache: ${r.onCache.calls} call(s), ${r.onCache.input} input + ${r.onCache.cacheRead} cache read + ${r.onCache.cacheWrite} cache write; ${kept(r.onCache)}`,
    `today's prompt: ${r.todaysPrompt.calls} call(s), ${r.todaysPrompt.input} input + ${r.todaysPrompt.cacheRead} cache read + ${r.todaysPrompt.cacheWrite} cache write; ${kept(r.todaysPrompt)}`,
  ];
}

if (require.main === module) runMain('compaction-cache', run, ratioLines);
