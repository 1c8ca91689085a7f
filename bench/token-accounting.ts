/**
 * Per-turn token accounting on a ~200,000-token session: the per-entry cache (only the new turn's
 * entries are tokenized) against a full recount, in the same run.
 *
 *   npx ts-node --swc bench/token-accounting.ts
 *
 * Prints one JSON object on stdout (people-text on stderr); `run()` returns the same object.
 */
import { performance } from 'node:perf_hooks';
import { estimateMessagesTokens, TokenCache } from '../src/context/estimate-tokens';
import type { AgentMessage } from '../src/context/types';

export interface TokenAccountingResult {
  sessionEntries: number;
  sessionTokens: number;
  turnsMeasured: number;
  /** Median milliseconds per turn to account the whole context with the cache warm. */
  cachedMsPerTurn: number;
  /** Median milliseconds per turn to recount every entry. */
  fullRecountMsPerTurn: number;
  /** fullRecountMsPerTurn / cachedMsPerTurn. */
  speedup: number;
  /** Entries tokenized per cached turn (should equal the new turn's entries). */
  entriesCountedPerCachedTurn: number;
}

const PARAGRAPH =
  'The deployment pipeline builds the service, runs migrations against the staging database, and then promotes the ' +
  'release after the health checks at https://status.example.com/api/v2 report green for ten minutes. ';

/** One exchange: a user request, a tool call, its (large) result and an answer — four entries. */
function turn(t: number): Array<{ id: string; message: AgentMessage }> {
  return [
    {
      id: `e${t}-u`,
      message: { role: 'user', content: `Step ${t}: check the logs for job ${t * 7919} and summarise.` },
    },
    {
      id: `e${t}-a1`,
      message: {
        role: 'assistant',
        content: [{ type: 'toolCall', id: `call${t}`, name: 'read', arguments: { path: `/var/log/job-${t}.log` } }],
        stopReason: 'toolUse',
      },
    },
    {
      id: `e${t}-r`,
      message: {
        role: 'toolResult',
        toolCallId: `call${t}`,
        toolName: 'read',
        content: [{ type: 'text', text: `job ${t}\n` + PARAGRAPH.repeat(18) }],
      },
    },
    {
      id: `e${t}-a2`,
      message: {
        role: 'assistant',
        content: [{ type: 'text', text: `Job ${t} finished; ${PARAGRAPH}` }],
        stopReason: 'stop',
      },
    },
  ];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Builds the session, measures both strategies over `turns` new turns, and returns the numbers. */
export function run(options: { targetTokens?: number; turns?: number; quick?: boolean } = {}): TokenAccountingResult {
  const targetTokens = options.targetTokens ?? 200_000;
  const turns = options.turns ?? 10;
  const entries: Array<{ id: string; message: AgentMessage }> = [];
  const idOf = new Map<AgentMessage, string>();
  const keyOf = (m: AgentMessage) => idOf.get(m);
  const cache = new TokenCache();
  const push = (e: { id: string; message: AgentMessage }) => {
    entries.push(e);
    idOf.set(e.message, e.id);
  };

  let t = 0;
  let tokens = 0;
  while (tokens < targetTokens) {
    turn(t++).forEach(push);
    tokens = estimateMessagesTokens(
      entries.map((e) => e.message),
      { cache, keyOf },
    ); // warms the cache
  }
  const sessionEntries = entries.length;

  const cachedMs: number[] = [];
  const fullMs: number[] = [];
  let counted = 0;
  for (let k = 0; k < turns; k += 1) {
    turn(t++).forEach(push);
    const messages = entries.map((e) => e.message);
    const missesBefore = cache.misses;
    let start = performance.now();
    const cached = estimateMessagesTokens(messages, { cache, keyOf });
    cachedMs.push(performance.now() - start);
    counted = cache.misses - missesBefore;
    start = performance.now();
    const full = estimateMessagesTokens(messages);
    fullMs.push(performance.now() - start);
    if (cached !== full) throw new Error(`cached total ${cached} differs from full recount ${full}`);
  }
  const cachedMsPerTurn = median(cachedMs);
  const fullRecountMsPerTurn = median(fullMs);
  return {
    sessionEntries,
    sessionTokens: tokens,
    turnsMeasured: turns,
    cachedMsPerTurn: round(cachedMsPerTurn),
    fullRecountMsPerTurn: round(fullRecountMsPerTurn),
    speedup: round(fullRecountMsPerTurn / Math.max(cachedMsPerTurn, 1e-6)),
    entriesCountedPerCachedTurn: counted,
  };
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}

if (require.main === module) {
  const result = run();
  process.stderr.write(
    `token accounting on a ${result.sessionTokens}-token session (${result.sessionEntries} entries): ` +
      `cached ${result.cachedMsPerTurn} ms/turn vs full recount ${result.fullRecountMsPerTurn} ms/turn (${result.speedup}×)\n`,
  );
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
