/**
 * Provider prompt caching: the same multi-turn session (tools, tool calls, growing history) run
 * through the real durable path twice against the fake Anthropic API — `promptCaching` on and off —
 * and the input tokens billed per turn for each, at Anthropic's price ratios: uncached input × 1,
 * cache writes × 1.25, cache reads × 0.1. The fake caches only byte-identical prefixes, so a
 * prefix that drifts between calls shows up here as a miss.
 *
 *   npx ts-node --swc bench/prompt-cache.ts      # BENCH_CACHE_TURNS (default 12)
 *
 * Prints one JSON object on stdout (people-text on stderr); `run()` returns the same object.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { openStore } from '../src/store/connect';
import { ToolRegistry } from '../src/tools/registry';
import type { TokenUsage } from '../src/protocol';
import { fakeReply, startFakeAnthropic, type FakeRequest } from '../src/testing';
import { testDeps } from '../test/support/keel-deps';
import { keelClient, runInProcessWorker, startTemporalTestEnv, uniqueTaskQueue } from '../test/support/temporal';
import { runMain } from './support/run-main';

/** Anthropic's prices relative to uncached input. */
const CACHE_WRITE_PRICE = 1.25;
const CACHE_READ_PRICE = 0.1;
const DEFAULT_TURNS = 12;
/** The target: with caching, the session's billed input is at most this share of the uncached one. */
const TARGET_RATIO = 0.4;

export interface PromptCacheTurn {
  readonly turn: number;
  readonly modelCalls: number;
  readonly cachedBilled: number;
  readonly uncachedBilled: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
}

export interface PromptCacheResult {
  readonly turns: number;
  readonly perTurn: PromptCacheTurn[];
  /** Billed input tokens over the whole session, caching on / off. */
  readonly cachedBilledTotal: number;
  readonly uncachedBilledTotal: number;
  /** cachedBilledTotal / uncachedBilledTotal: lower is better. */
  readonly ratio: number;
  readonly targetRatio: number;
  readonly meetsTarget: boolean;
}

const log = (line: string) => process.stderr.write(`${line}\n`);

/** Input tokens a turn is billed for, at Anthropic's ratios. */
function billed(usage: TokenUsage): number {
  return usage.inputTokens + usage.cacheWriteTokens * CACHE_WRITE_PRICE + usage.cacheReadTokens * CACHE_READ_PRICE;
}

/** A realistic tool list: a few tools with paragraphs of guidance each (together well over 1024 tokens). */
function benchTools(): ToolRegistry {
  const guidance =
    'Use it when the user asks about orders, stock or shipping; prefer exact identifiers, and say so when nothing matched. ';
  const tools = new ToolRegistry();
  for (const name of [
    'lookup_order',
    'check_stock',
    'track_shipment',
    'list_returns',
    'customer_profile',
    'open_ticket',
  ]) {
    tools.register({
      name,
      description: `${name.replace('_', ' ')}. ${guidance.repeat(8)}`,
      input: z.object({
        id: z.string().describe('The identifier the user gave'),
        detail: z.enum(['short', 'full']).default('short'),
      }),
      run: async ({ id }) => `${name} ${id}: ${'status line with dates, amounts and carrier notes; '.repeat(30)}`,
    });
  }
  return tools;
}

/** Every other turn asks for a lookup (a tool round, then the answer); the rest are answered directly. */
function reply(request: FakeRequest) {
  const messages = request.body.messages ?? [];
  const last = messages[messages.length - 1];
  const blocks = Array.isArray(last?.content) ? (last.content as Array<{ type: string; text?: string }>) : [];
  if (blocks.some((b) => b.type === 'tool_result'))
    return fakeReply.text(
      `Here is what I found. ${'The order shipped on time and the carrier reports no delay. '.repeat(6)}`,
    );
  const text = blocks.map((b) => b.text ?? '').join('') || String(last?.content ?? '');
  const match = /lookup (\d+)/.exec(text);
  if (match)
    return fakeReply.toolUse([
      {
        id: `toolu_${match[1]}_${randomBytes(3).toString('hex')}`,
        name: 'lookup_order',
        input: { id: `A-${match[1]}` },
      },
    ]);
  return fakeReply.text(`Noted. ${'I will keep that in mind for the rest of this conversation. '.repeat(5)}`);
}

export async function run(opts: { turns?: number; quick?: boolean } = {}): Promise<PromptCacheResult> {
  const turns = opts.turns ?? (Number(process.env.BENCH_CACHE_TURNS) || (opts.quick ? 8 : DEFAULT_TURNS));
  log('prompt-cache: starting a Temporal dev server, the fake model and the store…');
  const [env, fake, store] = await Promise.all([
    startTemporalTestEnv(),
    startFakeAnthropic(),
    openStore({ kind: 'pglite', dataDir: 'memory://' }),
  ]);
  fake.respondWith(reply);
  const queues = { on: uniqueTaskQueue('bench-cache-on'), off: uniqueTaskQueue('bench-cache-off') };
  const workers = await Promise.all([
    runInProcessWorker(
      env,
      queues.on,
      testDeps(store, fake.url, { tools: benchTools(), config: { promptCaching: true } }),
    ),
    runInProcessWorker(
      env,
      queues.off,
      testDeps(store, fake.url, { tools: benchTools(), config: { promptCaching: false } }),
    ),
  ]);
  try {
    const agent = `bench${randomBytes(4).toString('hex')}`;
    const sessions = {
      on: { client: keelClient(env, queues.on), key: `agent:${agent}:cache-on` },
      off: { client: keelClient(env, queues.off), key: `agent:${agent}:cache-off` },
    };
    const perTurn: PromptCacheTurn[] = [];
    for (let t = 1; t <= turns; t++) {
      const text =
        t % 2 === 0
          ? `Please lookup ${t} and tell me where it is.`
          : `Turn ${t}: ${'here is some background about my account and preferences. '.repeat(4)}`;
      const on = await sessions.on.client.sendMessage(sessions.on.key, text);
      const off = await sessions.off.client.sendMessage(sessions.off.key, text);
      perTurn.push({
        turn: t,
        modelCalls: on.modelCalls,
        cachedBilled: Math.round(billed(on.usage)),
        uncachedBilled: Math.round(billed(off.usage)),
        cacheReadTokens: on.usage.cacheReadTokens ?? 0,
        cacheWriteTokens: on.usage.cacheWriteTokens ?? 0,
      });
    }
    const cachedBilledTotal = perTurn.reduce((n, t) => n + t.cachedBilled, 0);
    const uncachedBilledTotal = perTurn.reduce((n, t) => n + t.uncachedBilled, 0);
    const ratio = Math.round((cachedBilledTotal / uncachedBilledTotal) * 1000) / 1000;
    return {
      turns,
      perTurn,
      cachedBilledTotal,
      uncachedBilledTotal,
      ratio,
      targetRatio: TARGET_RATIO,
      meetsTarget: ratio <= TARGET_RATIO,
    };
  } finally {
    fake.respondWith(undefined);
    await Promise.all(workers.map((w) => w.stop()));
    await fake.close();
    await store.close();
    await env.close();
  }
}

export function ratioLines(r: PromptCacheResult): string[] {
  return [
    `billed input tokens over ${r.turns} turns, caching on / off: ${r.cachedBilledTotal} / ${r.uncachedBilledTotal} = ${r.ratio}× (target ≤ ${r.targetRatio}×: ${r.meetsTarget ? 'met' : 'NOT met'})`,
  ];
}

function formatTable(r: PromptCacheResult): string {
  const rows = r.perTurn.map(
    (t) =>
      `${String(t.turn).padStart(4)}  ${String(t.modelCalls).padStart(5)}  ${String(t.cachedBilled).padStart(10)}  ${String(t.uncachedBilled).padStart(10)}  ${String(t.cacheReadTokens).padStart(8)}  ${String(t.cacheWriteTokens).padStart(8)}`,
  );
  return ['turn  calls  billed(on)  billed(off)  read(on)  write(on)', ...rows, '', ...ratioLines(r)].join('\n');
}

if (require.main === module) runMain('prompt-cache', run, formatTable);
