/**
 * Recall of what was said: a multi-session conversation is imported as one session, then a chat asks
 * every question in turn and the model answers each by calling `history_search` with the question,
 * exactly as an agent does (so the echoes of earlier searches are in the index when later ones run).
 * Recall@1/3/10 counts the evidence turns among the entries the tool showed for its first k hits
 * (a hit and the question or answer shown beside it). Printed beside it, in the same run: a plain
 * BM25 over the same turns (stop words, suffix stripping), and Keel's hits without what is shown beside them.
 *
 *   npx ts-node --swc bench/recall.ts                              # the generated conversation
 *   npx ts-node --swc bench/recall.ts --dataset locomo10.json --sample 0   # a public dataset (LoCoMo layout, or Keel's shape)
 *   npx ts-node --swc bench/recall.ts --misses                     # also print each question Keel missed, with what it showed
 *
 * Target: recall@10 ≥ 80%, and at least 15 points above the baseline wherever the baseline is under
 * 80%. PGlite in memory unless BENCH_DATABASE_URL is set. One JSON object on stdout.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SingleBar } from 'cli-progress';
import { openStore } from '../src/store/connect';
import { importSessions } from '../src/transfer/import-sessions';
import { fakeReply, startFakeAnthropic, type FakeRequest } from '../src/testing';
import { isFlushRequest, isSummarizerRequest } from '../test/support/durable-turn-helpers';
import { testDeps } from '../test/support/keel-deps';
import { keelClient, runInProcessWorker, startTemporalTestEnv, uniqueTaskQueue } from '../test/support/temporal';
import { loadRecallDataset, type RecallDataset } from './recall/dataset';
import { generateRecallDataset } from './recall/generate';
import { bm25Baseline } from './recall/bm25-baseline';

const KS = [1, 3, 10] as const;
const TARGET_RECALL_AT_10 = 0.8;
const TARGET_MARGIN = 0.15;

export interface RecallAtK {
  readonly at1: number;
  readonly at3: number;
  readonly at10: number;
}

export interface RecallResult {
  readonly dataset: string;
  readonly database: 'pglite' | 'postgres';
  readonly turns: number;
  readonly questions: number;
  /** Keel through history_search in the chat: each hit with what it showed beside it. */
  readonly keel: RecallAtK;
  /** The same hits without what was shown beside them. */
  readonly keelHitsOnly: RecallAtK;
  readonly bm25: RecallAtK;
  /** recall@10 per question category, Keel and baseline. */
  readonly byCategory: Record<string, { questions: number; keel: number; bm25: number }>;
  readonly meetsTarget: boolean;
}

const log = (line: string) => process.stderr.write(`${line}\n`);

export async function run(
  opts: { quick?: boolean; dataset?: string; sample?: number; databaseUrl?: string; showMisses?: boolean } = {},
): Promise<RecallResult> {
  const data = opts.dataset
    ? loadRecallDataset(opts.dataset, opts.sample)
    : generateRecallDataset({ sessions: opts.quick ? 10 : 20 });
  const turns = data.sessions.flatMap((s) => s.turns);
  log(
    `recall: ${data.name}: ${data.sessions.length} sessions, ${turns.length} turns, ${data.questions.length} questions`,
  );
  const baseline = bm25Baseline(turns.map((t) => ({ id: t.id, text: `${t.speaker}: ${t.text}` })));
  const bm25Ranked = data.questions.map((q) => baseline(q.question, 10).map((id) => [id]));
  const shown = await keelThroughTheTool(data, opts.databaseUrl ?? process.env.BENCH_DATABASE_URL);

  if (opts.showMisses) logMisses(data, shown);
  const keel = recallAt(data, shown);
  const keelHitsOnly = recallAt(
    data,
    shown.map((groups) => groups.map((g) => g.slice(0, 1))),
  );
  const bm25 = recallAt(data, bm25Ranked);
  const byCategory: RecallResult['byCategory'] = {};
  data.questions.forEach((q, i) => {
    const c = (byCategory[q.category ?? 'all'] ??= { questions: 0, keel: 0, bm25: 0 });
    c.questions++;
    c.keel += share(q.evidence, shown[i]!.slice(0, 10).flat());
    c.bm25 += share(q.evidence, bm25Ranked[i]!.slice(0, 10).flat());
  });
  for (const c of Object.values(byCategory)) {
    c.keel = round(c.keel / c.questions);
    c.bm25 = round(c.bm25 / c.questions);
  }
  const margin = bm25.at10 < TARGET_RECALL_AT_10 ? TARGET_MARGIN : 0;
  const result: RecallResult = {
    dataset: data.name,
    database: (opts.databaseUrl ?? process.env.BENCH_DATABASE_URL) ? 'postgres' : 'pglite',
    turns: turns.length,
    questions: data.questions.length,
    keel,
    keelHitsOnly,
    bm25,
    byCategory,
    meetsTarget: keel.at10 >= TARGET_RECALL_AT_10 && keel.at10 >= bm25.at10 + margin - 1e-9,
  };
  return result;
}

/**
 * Imports the conversation as one session, then asks every question through sendMessage; the fake
 * model searches with the question and answers by quoting what it found. Returns, per question,
 * the entry groups the tool showed (a hit, then what it showed beside it), as dataset turn ids.
 */
async function keelThroughTheTool(data: RecallDataset, databaseUrl: string | undefined): Promise<string[][][]> {
  const store = await openStore(
    databaseUrl ? { kind: 'postgres', url: databaseUrl } : { kind: 'pglite', dataDir: 'memory://' },
  );
  const dir = await mkdtemp(join(tmpdir(), 'keel-recall-'));
  const [env, fake] = await Promise.all([startTemporalTestEnv(), startFakeAnthropic()]);
  const agentId = `recall${randomBytes(4).toString('hex')}`;
  const key = `agent:${agentId}:main`;
  const turnOf = await writeConversation(dir, data, key);
  try {
    const report = await importSessions({ db: store.db, agentId, dir });
    if (report.totals.imported !== 1)
      throw new Error(`recall: the import did not take the conversation: ${JSON.stringify(report.totals)}`);
    fake.respondWith((r) => {
      if (isSummarizerRequest(r)) return fakeReply.text('## Goal\nAnswer questions about the conversation.');
      if (isFlushRequest(r)) return fakeReply.text('NO_REPLY');
      const found = endingToolResult(r);
      if (found !== undefined) return fakeReply.text(`From the history: ${found.slice(0, 600)}`);
      return fakeReply.toolUse([{ id: `toolu_${r.index}`, name: 'history_search', input: { query: lastQuestion(r) } }]);
    });
    const queue = uniqueTaskQueue('recall');
    const worker = await runInProcessWorker(env, queue, testDeps(store, fake.url));
    const client = keelClient(env, queue);
    const bar = new SingleBar({
      format: 'recall: asking {value}/{total} questions through history_search',
      stream: process.stderr,
    });
    bar.start(data.questions.length, 0);
    const shown: string[][][] = [];
    try {
      for (const q of data.questions) {
        const before = fake.requests.length;
        await client.sendMessage(key, q.question);
        const result =
          fake.requests
            .slice(before)
            .map(endingToolResult)
            .filter((t) => t !== undefined)
            .at(-1) ?? '';
        shown.push(groupsShown(result).map((g) => g.map((id) => turnOf.get(id) ?? id)));
        bar.increment();
      }
    } finally {
      bar.stop();
      await worker.stop();
    }
    return shown;
  } finally {
    await Promise.all([fake.close(), env.close()]);
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The conversation as one session file and its index: the first speaker is the user, the other the
 * assistant, each line prefixed with its speaker's name; each session's turns a minute apart from
 * its date. Returns entry id → dataset turn id.
 */
async function writeConversation(dir: string, data: RecallDataset, key: string): Promise<Map<string, string>> {
  const sessionId = `recall-${randomBytes(4).toString('hex')}`;
  const first = data.sessions[0]!.turns[0]!.speaker;
  const turnOf = new Map<string, string>();
  const lines: unknown[] = [
    { type: 'session', id: sessionId, version: 3, timestamp: data.sessions[0]!.date, cwd: '/' },
  ];
  let parentId: string | null = null;
  let n = 0;
  for (const session of data.sessions) {
    session.turns.forEach((t, i) => {
      const id = `t${++n}`;
      turnOf.set(id, t.id);
      const timestamp = new Date(Date.parse(session.date) + i * 60_000).toISOString();
      const text = `${t.speaker}: ${t.text}`;
      const message =
        t.speaker === first
          ? { role: 'user', content: text, timestamp: Date.parse(timestamp) }
          : {
              role: 'assistant',
              content: [{ type: 'text', text }],
              stopReason: 'stop',
              model: 'imported',
              usage: { input: 0, output: 0, totalTokens: 0 },
              timestamp: Date.parse(timestamp),
            };
      lines.push({ type: 'message', id, parentId, timestamp, message });
      parentId = id;
    });
  }
  await writeFile(join(dir, `${sessionId}.jsonl`), `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
  const last = data.sessions.at(-1)!.date;
  await writeFile(
    join(dir, 'sessions.json'),
    JSON.stringify({
      [key]: {
        sessionId,
        sessionFile: `${sessionId}.jsonl`,
        updatedAt: Date.parse(last),
        sessionStartedAt: Date.parse(data.sessions[0]!.date),
        chatType: 'direct',
      },
    }),
  );
  return turnOf;
}

/**
 * The question a request ends with: the last paragraph of its last message (when the conversation
 * ends with the user's turn, the first question is sent joined to it, as consecutive user turns are).
 */
function lastQuestion(r: FakeRequest): string {
  const last = r.body.messages?.at(-1);
  if (!last) return '';
  const texts =
    typeof last.content === 'string'
      ? [last.content]
      : (last.content.filter((b: { type: string }) => b.type === 'text') as Array<{ text: string }>).map((b) => b.text);
  return (texts.at(-1) ?? '').split('\n\n').at(-1) ?? '';
}

/** The tool result a request ends with, as text. */
function endingToolResult(r: FakeRequest): string | undefined {
  const last = r.body.messages?.at(-1);
  if (!last || typeof last.content === 'string') return undefined;
  const block = last.content.find((b: { type: string }) => b.type === 'tool_result') as
    { content?: unknown } | undefined;
  if (!block) return undefined;
  return typeof block.content === 'string' ? block.content : JSON.stringify(block.content);
}

/** The entries a history_search result shows, grouped per hit: the hit first, then any entry shown beside it. */
function groupsShown(result: string): string[][] {
  const groups: string[][] = [];
  for (const line of result.split(/\\n|\n/)) {
    const hit = /^- entry (\S+) ·/.exec(line);
    if (hit) groups.push([hit[1]!]);
    const beside = /^\s+(?:answered by|answering) \(entry (\S+) ·/.exec(line);
    if (beside && groups.length > 0) groups.at(-1)!.push(beside[1]!);
  }
  return groups;
}

/** Each question whose evidence Keel did not show in 10 hits: the evidence, and the first three hits. */
function logMisses(data: RecallDataset, shown: readonly string[][][]): void {
  const text = new Map(data.sessions.flatMap((s) => s.turns).map((t) => [t.id, `${t.speaker}: ${t.text}`]));
  data.questions.forEach((q, i) => {
    if (share(q.evidence, shown[i]!.slice(0, 10).flat()) === 1) return;
    log(`missed: ${q.question}\n  evidence: ${q.evidence.map((e) => `${e} ${text.get(e)}`).join(' | ')}`);
    for (const g of shown[i]!.slice(0, 3))
      log(`  shown: ${g.map((e) => `${e} ${(text.get(e) ?? '(not a dataset turn)').slice(0, 100)}`).join(' + ')}`);
  });
}

/** The share of `evidence` among `found`. */
function share(evidence: readonly string[], found: readonly string[]): number {
  return evidence.filter((e) => found.includes(e)).length / evidence.length;
}

/** Mean recall@k over the questions, each question's first k groups counted. */
function recallAt(data: RecallDataset, ranked: readonly (readonly string[][])[]): RecallAtK {
  const at = (k: number) =>
    round(
      data.questions.reduce((sum, q, i) => sum + share(q.evidence, ranked[i]!.slice(0, k).flat()), 0) /
        data.questions.length,
    );
  const [at1, at3, at10] = KS.map(at) as [number, number, number];
  return { at1, at3, at10 };
}

const round = (x: number) => Math.round(x * 1000) / 1000;
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

export function ratioLines(r: RecallResult): string[] {
  const row = (name: string, v: RecallAtK) =>
    `  ${name.padEnd(44)} @1 ${pct(v.at1).padStart(6)}  @3 ${pct(v.at3).padStart(6)}  @10 ${pct(v.at10).padStart(6)}`;
  const points = ((r.keel.at10 - r.bm25.at10) * 100).toFixed(1);
  return [
    `recall of evidence turns (${r.dataset}, ${r.turns} turns, ${r.questions} questions, ${r.database}):`,
    row('Keel history_search in a chat (as shown)', r.keel),
    row('Keel history_search hits alone', r.keelHitsOnly),
    row('BM25 baseline (stop words, suffix stripping)', r.bm25),
    `  by category @10: ${Object.entries(r.byCategory)
      .map(([c, v]) => `${c} (${v.questions}) Keel ${pct(v.keel)} / BM25 ${pct(v.bm25)}`)
      .join('; ')}`,
    `  Keel − BM25 at @10: ${points} points (target: ≥ ${pct(TARGET_RECALL_AT_10)} and ≥ +${TARGET_MARGIN * 100} points where BM25 < ${pct(TARGET_RECALL_AT_10)}: ${r.meetsTarget ? 'met' : 'NOT met'})`,
  ];
}

if (require.main === module) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? process.argv[i + 1] : undefined;
  };
  const sample = arg('--sample');
  run({
    quick: process.argv.includes('--quick'),
    showMisses: process.argv.includes('--misses'),
    ...(arg('--dataset') ? { dataset: arg('--dataset')! } : {}),
    ...(sample ? { sample: Number(sample) } : {}),
  })
    .then((r) => {
      for (const line of ratioLines(r)) log(line);
      process.stdout.write(`${JSON.stringify(r)}\n`);
      process.exit(0);
    })
    .catch((err: unknown) => {
      log(`recall: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      process.exit(1);
    });
}
