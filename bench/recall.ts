/**
 * Recall of what was said: a multi-session conversation is imported as one session, then a chat asks
 * every question in turn and the model answers each by calling `history_search` with the question,
 * exactly as an agent does (so the echoes of earlier searches are in the index when later ones run).
 * With an embeddings endpoint the imported session is backfilled first, and the chat searches hybrid.
 * Then every ranking is asked the same questions through the same tool on the same store: keywords
 * (Keel's BM25), dense only, hybrid, and the ablation (fusion weights, the question embedded as asked).
 * Recall@1/3/10 counts the evidence turns among the hits alone (the headline) and among what the tool
 * showed for its first k hits (a hit and the question or answer beside it); the mean tokens of a tool
 * result beside them. Printed in the same run: a textbook BM25 over the same turns (stop words,
 * suffix stripping).
 *
 *   npx ts-node --swc bench/recall.ts                                   # the generated conversation, keywords only
 *   bash bench/embeddings/serve.sh &                                    # all-MiniLM-L6-v2 on :8765 (once: sets up a cache folder)
 *   npx ts-node --swc bench/recall.ts --embeddings http://127.0.0.1:8765/v1 --model all-MiniLM-L6-v2
 *   npx ts-node --swc bench/recall.ts --dataset ~/.cache/keel-bench/BEAM/chats/100K/1,~/.cache/keel-bench/BEAM/chats/500K/1 …
 *   npx ts-node --swc bench/recall.ts --dataset locomo10.json --sample 0  # LoCoMo layout, or Keel's shape
 *   npx ts-node --swc bench/recall.ts --misses                          # also print each question the chat missed
 *
 * Targets: hybrid hits alone recall@10 ≥ 15 points above the textbook BM25 (with embeddings);
 * as shown ≥ 80%. PGlite in memory unless BENCH_DATABASE_URL is set. One JSON object on stdout.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SingleBar } from 'cli-progress';
import { openStore, type Store } from '../src/store/connect';
import { importSessions } from '../src/transfer/import-sessions';
import { fakeReply, startFakeAnthropic, type FakeRequest } from '../src/testing';
import { isFlushRequest, isSummarizerRequest } from '../test/support/durable-turn-helpers';
import { testDeps } from '../test/support/keel-deps';
import { keelClient, runInProcessWorker, startTemporalTestEnv, uniqueTaskQueue } from '../test/support/temporal';
import { loadRecallDataset, type RecallDataset } from './recall/dataset';
import { generateRecallDataset } from './recall/generate';
import { bm25Baseline } from './recall/bm25-baseline';
import { newRecall, type Recall } from '../src/embeddings/recall-runtime';
import { backfillVectors } from '../src/embeddings/backfill-vectors';
import { vectorCoverage } from '../src/store/embeddings-repo';
import { sessionIdsOfKey } from '../src/store/session-ids-repo';
import { historyTools } from '../activities/parts/history-tools';
import { textTokens } from '../src/context/history-pages';
import type { ActivityDeps } from '../src/runtime/deps';
import type { EmbeddingsEndpoint } from '../src/embeddings/embeddings-client';
import { DEFAULTS } from '../src/config/defaults';

const KS = [1, 3, 10] as const;
const TARGET_SHOWN_AT_10 = 0.8;
const TARGET_MARGIN = 0.15;

export interface RecallAtK {
  readonly at1: number;
  readonly at3: number;
  readonly at10: number;
}

/** One ranking asked every question through the tool. */
export interface RankingResult {
  readonly name: string;
  readonly hitsAlone: RecallAtK;
  readonly asShown: RecallAtK;
  /** Mean tokens of a history_search result. */
  readonly meanTokens: number;
}

export interface RecallResult {
  readonly datasets: string[];
  readonly database: 'pglite' | 'postgres';
  readonly embeddings: string;
  readonly turns: number;
  readonly questions: number;
  /** The chat through sendMessage: hybrid with embeddings, else keywords. */
  readonly chat: RankingResult;
  /** Every ranking on the same store, the same questions; the first is Keel's keywords-only BM25. */
  readonly rankings: RankingResult[];
  readonly bm25: RecallAtK;
  /** recall@10 hits alone per question category: the chat's ranking and the textbook BM25. */
  readonly byCategory: Record<string, { questions: number; keel: number; bm25: number }>;
  readonly meetsTarget: boolean;
}

/** What a ranking found for each question: groups (a hit, then what was shown beside it), and the result's tokens. */
interface Asked {
  readonly groups: string[][][];
  readonly tokens: number[];
}

/** The rankings compared: a name and the recall state the tool searches with (none: keywords only). */
function rankings(base: Recall | undefined): { name: string; recall: Recall | undefined }[] {
  const keywords = { name: 'keywords only (Keel BM25)', recall: undefined };
  if (!base) return [keywords];
  const tuned = (tuning: NonNullable<Recall['tuning']>): Recall => ({ ...base, tuning });
  const rrf = { method: 'rrf' as const, k: DEFAULTS.recallRrfK };
  return [
    keywords,
    { name: 'dense only (names left out of the query)', recall: tuned({ fusion: { method: 'dense' } }) },
    { name: 'dense only, question as asked', recall: tuned({ fusion: { method: 'dense' }, keepCommonWords: true }) },
    { name: 'hybrid: RRF, dense weight 1 (default)', recall: tuned({}) },
    { name: 'hybrid, question as asked to dense', recall: tuned({ keepCommonWords: true }) },
    { name: 'hybrid, keyword matches on common words kept', recall: tuned({ keepCommonMatches: true }) },
    { name: 'hybrid, dense weight 0.5', recall: tuned({ fusion: { ...rrf, denseWeight: 0.5 } }) },
    { name: 'hybrid, dense weight 2', recall: tuned({ fusion: { ...rrf, denseWeight: 2 } }) },
    { name: 'hybrid, RRF k = 10', recall: tuned({ fusion: { method: 'rrf', k: 10, denseWeight: 1 } }) },
  ];
}

const log = (line: string) => process.stderr.write(`${line}\n`);

export async function run(
  opts: {
    quick?: boolean;
    datasets?: string[];
    sample?: number;
    databaseUrl?: string;
    showMisses?: boolean;
    embeddings?: EmbeddingsEndpoint;
  } = {},
): Promise<RecallResult> {
  const embeddings =
    opts.embeddings ??
    (process.env.KEEL_EMBEDDINGS_BASE_URL && process.env.KEEL_EMBEDDINGS_MODEL
      ? { baseUrl: process.env.KEEL_EMBEDDINGS_BASE_URL, model: process.env.KEEL_EMBEDDINGS_MODEL }
      : undefined);
  const all = opts.datasets?.length
    ? opts.datasets.map((d) => loadRecallDataset(d, opts.sample))
    : [generateRecallDataset({ sessions: opts.quick ? 10 : 20 })];
  const databaseUrl = opts.databaseUrl ?? process.env.BENCH_DATABASE_URL;
  const evidence: string[][] = [];
  const categories: string[] = [];
  const bm25Ranked: string[][][] = [];
  let chat: Asked = { groups: [], tokens: [] };
  const byRanking = new Map<string, Asked>();
  let turns = 0;
  for (const data of all) {
    const dataTurns = data.sessions.flatMap((s) => s.turns);
    turns += dataTurns.length;
    log(
      `recall: ${data.name}: ${data.sessions.length} sessions, ${dataTurns.length} turns, ${data.questions.length} questions`,
    );
    const baseline = bm25Baseline(dataTurns.map((t) => ({ id: t.id, text: `${t.speaker}: ${t.text}` })));
    for (const q of data.questions) {
      evidence.push(q.evidence);
      categories.push(q.category ?? 'all');
      bm25Ranked.push(baseline(q.question, 10).map((id) => [id]));
    }
    const asked = await keelThroughTheTool(data, databaseUrl, embeddings);
    if (opts.showMisses) logMisses(data, asked.chat.groups);
    chat = joined(chat, asked.chat);
    for (const [name, a] of asked.rankings) byRanking.set(name, joined(byRanking.get(name), a));
  }
  const resultOf = (name: string, a: Asked): RankingResult => ({
    name,
    hitsAlone: recallAt(
      evidence,
      a.groups.map((groups) => groups.map((g) => g.slice(0, 1))),
    ),
    asShown: recallAt(evidence, a.groups),
    meanTokens: Math.round(a.tokens.reduce((x, y) => x + y, 0) / Math.max(1, a.tokens.length)),
  });
  const bm25 = recallAt(evidence, bm25Ranked);
  const byCategory: RecallResult['byCategory'] = {};
  categories.forEach((category, i) => {
    const c = (byCategory[category] ??= { questions: 0, keel: 0, bm25: 0 });
    c.questions++;
    c.keel += share(
      evidence[i]!,
      chat.groups[i]!.slice(0, 10).map((g) => g[0]!),
    );
    c.bm25 += share(evidence[i]!, bm25Ranked[i]!.slice(0, 10).flat());
  });
  for (const c of Object.values(byCategory)) {
    c.keel = round(c.keel / c.questions);
    c.bm25 = round(c.bm25 / c.questions);
  }
  const chatResult = resultOf(embeddings ? 'chat, hybrid' : 'chat, keywords only', chat);
  return {
    datasets: all.map((d) => d.name),
    database: databaseUrl ? 'postgres' : 'pglite',
    embeddings: embeddings ? `${embeddings.model} at ${embeddings.baseUrl}` : 'none (keywords only)',
    turns,
    questions: evidence.length,
    chat: chatResult,
    rankings: [...byRanking].map(([name, a]) => resultOf(name, a)),
    bm25,
    byCategory,
    meetsTarget:
      chatResult.asShown.at10 >= TARGET_SHOWN_AT_10 &&
      (!embeddings || chatResult.hitsAlone.at10 >= bm25.at10 + TARGET_MARGIN - 1e-9),
  };
}

function joined(a: Asked | undefined, b: Asked): Asked {
  return a ? { groups: [...a.groups, ...b.groups], tokens: [...a.tokens, ...b.tokens] } : b;
}

/**
 * Imports the conversation as one session (and embeds it when an endpoint is given), then asks
 * every question through sendMessage; the fake model searches with the question and answers by
 * quoting what it found. Then asks each ranking the same questions through the tool directly.
 * Groups are dataset turn ids.
 */
async function keelThroughTheTool(
  data: RecallDataset,
  databaseUrl: string | undefined,
  embeddings: EmbeddingsEndpoint | undefined,
): Promise<{ chat: Asked; rankings: Map<string, Asked> }> {
  const store = await openStore(
    databaseUrl ? { kind: 'postgres', url: databaseUrl } : { kind: 'pglite', dataDir: 'memory://' },
  );
  const dir = await mkdtemp(join(tmpdir(), 'keel-recall-'));
  const [env, fake] = await Promise.all([startTemporalTestEnv(), startFakeAnthropic()]);
  const agentId = `recall${randomBytes(4).toString('hex')}`;
  const key = `agent:${agentId}:main`;
  const turnOf = await writeConversation(dir, data, key);
  const toTurns = (result: string) => groupsShown(result).map((g) => g.map((id) => turnOf.get(id) ?? id));
  try {
    const report = await importSessions({ db: store.db, agentId, dir });
    if (report.totals.imported !== 1)
      throw new Error(`recall: the import did not take the conversation: ${JSON.stringify(report.totals)}`);
    // A CPU-served model on a shared machine: minutes for a batch of long turns, seconds for a query.
    const recall = embeddings ? newRecall({ batchMs: 600_000, queryMs: 120_000 }) : undefined;
    if (embeddings) await embedConversation(store, recall!, embeddings, agentId, key);
    fake.respondWith((r) => {
      if (isSummarizerRequest(r)) return fakeReply.text('## Goal\nAnswer questions about the conversation.');
      if (isFlushRequest(r)) return fakeReply.text('NO_REPLY');
      const found = endingToolResult(r);
      if (found !== undefined) return fakeReply.text(`From the history: ${found.slice(0, 600)}`);
      return fakeReply.toolUse([{ id: `toolu_${r.index}`, name: 'history_search', input: { query: lastQuestion(r) } }]);
    });
    const queue = uniqueTaskQueue('recall');
    const config = embeddings ? { embeddingsBaseUrl: embeddings.baseUrl, embeddingsModel: embeddings.model } : {};
    const deps: ActivityDeps = { ...testDeps(store, fake.url, { config }), ...(recall ? { recall } : {}) };
    const worker = await runInProcessWorker(env, queue, deps);
    const client = keelClient(env, queue);
    const chat: Asked = { groups: [], tokens: [] };
    await withBar(
      'asking {value}/{total} questions through history_search in a chat',
      data.questions.length,
      async (tick) => {
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
            chat.groups.push(toTurns(result));
            chat.tokens.push(textTokens(result));
            tick();
          }
        } finally {
          await worker.stop();
        }
      },
    );
    const byRanking = new Map<string, Asked>();
    for (const ranking of rankings(recall)) {
      const { recall: _chatRecall, ...keywordDeps } = deps;
      const [search] = historyTools(ranking.recall ? { ...deps, recall: ranking.recall } : keywordDeps);
      const asked: Asked = { groups: [], tokens: [] };
      await withBar(`${ranking.name}: {value}/{total}`, data.questions.length, async (tick) => {
        for (const q of data.questions) {
          const out = await search.run(search.input.parse({ query: q.question }), {
            agentId,
            sessionKey: key,
            idempotencyKey: 'recall-bench',
            signal: new AbortController().signal,
          });
          const result =
            typeof out === 'string' ? out : out.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
          asked.groups.push(toTurns(result));
          asked.tokens.push(textTokens(result));
          tick();
        }
      });
      byRanking.set(ranking.name, asked);
    }
    return { chat, rankings: byRanking };
  } finally {
    await Promise.all([fake.close(), env.close()]);
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** The imported session's backfill, as `keel embeddings backfill` runs it. */
async function embedConversation(
  store: Store,
  recall: Recall,
  endpoint: EmbeddingsEndpoint,
  agentId: string,
  key: string,
): Promise<void> {
  const sessionIds = (await sessionIdsOfKey(store.db, agentId, key)).map((s) => s.sessionId);
  const { entries } = await vectorCoverage(store.db, agentId, sessionIds, endpoint.model);
  const started = Date.now();
  await withBar('embedding {value}/{total} entries', entries, (tick) =>
    backfillVectors({ db: store.db, embedder: recall.embedders.for(endpoint), agentId, onBatch: (n) => tick(n) }),
  );
  log(`recall: embedded ${entries} entries in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

async function withBar<T>(format: string, total: number, body: (tick: (n?: number) => void) => Promise<T>): Promise<T> {
  const bar = new SingleBar({ format: `recall: ${format}`, stream: process.stderr });
  bar.start(total, 0);
  try {
    return await body((n = 1) => bar.increment(n));
  } finally {
    bar.stop();
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
function recallAt(evidence: readonly string[][], ranked: readonly (readonly string[][])[]): RecallAtK {
  const at = (k: number) =>
    round(evidence.reduce((sum, e, i) => sum + share(e, ranked[i]!.slice(0, k).flat()), 0) / evidence.length);
  const [at1, at3, at10] = KS.map(at) as [number, number, number];
  return { at1, at3, at10 };
}

const round = (x: number) => Math.round(x * 1000) / 1000;
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

export function ratioLines(r: RecallResult): string[] {
  const at = (v: RecallAtK) => `${pct(v.at1).padStart(6)} ${pct(v.at3).padStart(6)} ${pct(v.at10).padStart(6)}`;
  const row = (x: RankingResult) =>
    `  ${x.name.padEnd(44)} ${at(x.hitsAlone)}   ${at(x.asShown)}   ${String(x.meanTokens).padStart(6)}`;
  const points = ((r.chat.hitsAlone.at10 - r.bm25.at10) * 100).toFixed(1);
  return [
    `recall of evidence turns (${r.datasets.join(', ')}; ${r.turns} turns, ${r.questions} questions, ${r.database}; embeddings: ${r.embeddings}):`,
    `  ${'ranking'.padEnd(44)} hits alone @1/@3/@10      as shown @1/@3/@10       tokens`,
    `  ${'textbook BM25 (stop words, suffix stripping)'.padEnd(44)} ${at(r.bm25)}`,
    row(r.chat),
    ...r.rankings.map(row),
    `  by category, hits alone @10: ${Object.entries(r.byCategory)
      .map(([c, v]) => `${c} (${v.questions}) Keel ${pct(v.keel)} / BM25 ${pct(v.bm25)}`)
      .join('; ')}`,
    `  chat hits alone − textbook BM25 at @10: ${points} points (target: as shown ≥ ${pct(TARGET_SHOWN_AT_10)}${r.embeddings.startsWith('none') ? '' : `, hits alone ≥ +${TARGET_MARGIN * 100} points`}: ${r.meetsTarget ? 'met' : 'NOT met'})`,
  ];
}

if (require.main === module) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? process.argv[i + 1] : undefined;
  };
  const sample = arg('--sample');
  const baseUrl = arg('--embeddings');
  run({
    quick: process.argv.includes('--quick'),
    showMisses: process.argv.includes('--misses'),
    ...(arg('--dataset') ? { datasets: arg('--dataset')!.split(',') } : {}),
    ...(sample ? { sample: Number(sample) } : {}),
    ...(baseUrl ? { embeddings: { baseUrl, model: arg('--model') ?? 'all-MiniLM-L6-v2' } } : {}),
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
