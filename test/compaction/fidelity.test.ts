/**
 * Fidelity of stacked compactions: a 300-turn transcript with planted identifiers is compacted 10
 * times in sequence (each time: plan on the entries since the last cut with the previous summary,
 * summarize with the extractive summary). Every planted identifier must survive, and the summary
 * must stay under 10% of a 200,000-token window.
 */
import { countTokens } from 'gpt-tokenizer/cjs/encoding/cl100k_base';
import { collectFacts, extractiveSummary } from '../../src/compaction/extractive-summary';
import { planCompaction } from '../../src/compaction/plan-compaction';
import { checkSummaryQuality, guardSummary } from '../../src/compaction/quality-guard';
import { sourceIdentifiers } from '../../src/compaction/message-identifiers';
import type { PlanEntry } from '../../src/compaction/types';
import { estimateTokens } from '../../src/context/estimate-tokens';
import type { AgentMessage } from '../../src/context/types';
import { messageText } from '../../src/compaction/serialize-for-summary';
import { prng } from '../fixtures/generate';

const WINDOW = 200_000;
const TURNS = 300;
const COMPACTIONS = 10;

function hex(rand: () => number, n: number): string {
  let out = '';
  while (out.length < n) out += Math.floor(rand() * 16).toString(16);
  // Hashes carry a digit and a letter (a hex word like "defaced" is not one).
  return `${out.slice(0, n - 2)}7a`;
}

function plantedIdentifiers(): string[] {
  const r = prng(42);
  const ids: string[] = [];
  for (let i = 0; i < 8; i++) ids.push(`/srv/keel/module-${i}/handler-${i}.ts`);
  for (let i = 0; i < 6; i++) ids.push(`https://svc-${i}.example.com/api/v${i}/items?id=${i * 7}`);
  for (let i = 0; i < 6; i++) ids.push(`${hex(r, 8)}-${hex(r, 4)}-4${hex(r, 3)}-a${hex(r, 3)}-${hex(r, 12)}`);
  for (let i = 0; i < 6; i++) ids.push(hex(r, i % 2 ? 40 : 9));
  for (let i = 0; i < 6; i++) ids.push(`db-${i}.cluster.internal:${5400 + i}`);
  for (let i = 0; i < 4; i++) ids.push(`10.${i}.${i * 3}.${20 + i}`);
  ids.push('fe80::1ff:fe23:4567:890a', '2001:db8::8a2e:370:7334');
  ids.push('migration-0042.sql', 'runbook-payments.md');
  ids.push('PAY-1234', 'CVE-2024-3094', 'keel/core#412', 'v2.3.1', '1.24.0');
  return ids;
}

/** Facts only people state: quoted names and a decision the user asks to be remembered (user messages). */
const SPOKEN_FACTS: ReadonlyArray<{ turn: number; text: string; kept: string }> = [
  {
    turn: 5,
    text: 'Please remember that deploys only happen on Tuesdays.',
    kept: 'Please remember that deploys only happen on Tuesdays.',
  },
  { turn: 40, text: 'We call the new pipeline "Project Falcon".', kept: '"Project Falcon"' },
  { turn: 150, text: 'The customer is “Blue Harbor Logistics”.', kept: '“Blue Harbor Logistics”' },
];

const FILLER = [
  'Looking at the current state of the code, the handler reads the queue and writes results back.',
  'The tests pass locally; the flaky one depends on timing, so I will not touch it now.',
  'Here is what the function does: it validates input, loads the record and applies the change.',
  'That matches what we saw yesterday in the logs, nothing new there.',
];

function buildTranscript(): { entries: PlanEntry[]; plantedAt: Map<string, number> } {
  const ids = plantedIdentifiers();
  const plantedAt = new Map<string, number>();
  const r = prng(7);
  const entries: PlanEntry[] = [];
  const push = (message: AgentMessage) => entries.push({ id: `e${entries.length}`, message });
  const t0 = Date.UTC(2026, 0, 5, 9, 0);
  for (let turn = 0; turn < TURNS; turn++) {
    const planted = ids.filter((_, j) => Math.floor((j * TURNS) / ids.length) + 3 === turn);
    const where = turn % 4;
    const mention = planted.length ? ` (${planted.join(', ')})` : '';
    const ts = t0 + turn * 120_000;
    const spoken = SPOKEN_FACTS.filter((f) => f.turn === turn)
      .map((f) => ` ${f.text}`)
      .join('');
    push({
      role: 'user',
      content: `Turn ${turn}: please continue with step ${turn}${where === 0 ? mention : ''}.${spoken}`,
      timestamp: ts,
    });
    push({
      role: 'assistant',
      content: [
        {
          type: 'text',
          text: `${FILLER[turn % FILLER.length]}${turn % 10 === 0 ? ` We decided to use strategy ${turn} for batching.` : ''}`,
        },
        {
          type: 'toolCall',
          id: `call-${turn}`,
          name: 'bash',
          arguments: { command: `run step ${turn}${where === 1 ? mention : ''}` },
        },
      ],
      stopReason: 'toolUse',
      timestamp: ts + 1_000,
    });
    const output = Array.from(
      { length: 30 + Math.floor(r() * 40) },
      (_, k) => `line ${k}: ok processed item ${turn * 100 + k}`,
    ).join('\n');
    push({
      role: 'toolResult',
      toolCallId: `call-${turn}`,
      toolName: 'bash',
      content: [{ type: 'text', text: `${output}${where === 2 ? `\nsee${mention}` : ''}` }],
      details: { exitCode: 0 },
      timestamp: ts + 2_000,
    });
    const todo = turn % 7 === 0 ? `\nTODO: verify step ${turn} output` : '';
    const done = turn % 7 === 3 && turn > 7 ? `\nDone: verify step ${turn - 10} output` : '';
    push({
      role: 'assistant',
      content: [{ type: 'text', text: `Step ${turn} finished${where === 3 ? mention : ''}.${todo}${done}` }],
      stopReason: 'stop',
      timestamp: ts + 3_000,
    });
    for (const id of planted) plantedAt.set(id, turn);
    for (const f of SPOKEN_FACTS) if (f.turn === turn) plantedAt.set(f.kept, turn);
  }
  return { entries, plantedAt };
}

/**
 * A scripted summarizer that does what weak models do: keeps a goal and a progress line, the first
 * few identifiers it sees, and paraphrases the rest away. The quality guard must restore what it lost.
 */
function lossyModelSummary(previousSummary: string | undefined, messages: readonly AgentMessage[]): string {
  const ids = sourceIdentifiers(previousSummary, messages, 'strict').slice(0, 5);
  return `## Goal\nContinue the numbered steps.\n\n## Progress\nWorked through ${messages.length} more messages; things look fine.\n\n## Critical context\n${ids.join(' ')}`;
}

type Summarize = (previousSummary: string | undefined, messages: readonly AgentMessage[]) => string;

const extractive: Summarize = (previousSummary, messages) =>
  extractiveSummary({ previousSummary, messages, policy: 'strict' });
/** The model path as the compaction workflow runs it: summarize, then guard with the range's facts. */
const scriptedModel: Summarize = (previousSummary, messages) =>
  guardSummary(
    lossyModelSummary(previousSummary, messages),
    sourceIdentifiers(previousSummary, messages, 'strict'),
    16_000,
    collectFacts(previousSummary, messages, 'strict'),
  ).summary;

describe.each<[string, Summarize]>([
  ['extractive summary', extractive],
  ['scripted lossy model + quality guard', scriptedModel],
])('stacked compaction fidelity (%s)', (name, summarize) => {
  const { entries, plantedAt } = buildTranscript();
  const cache = new Map<AgentMessage, number>();
  const estimate = (m: AgentMessage) => {
    let v = cache.get(m);
    if (v === undefined) cache.set(m, (v = estimateTokens(m)));
    return v;
  };

  it('plants about 50 facts of every kind spread over all turns', () => {
    expect(plantedAt.size).toBe(48);
    const turns = [...plantedAt.values()];
    expect(Math.min(...turns)).toBeLessThan(10);
    expect(Math.max(...turns)).toBeGreaterThan(TURNS - 20);
  });

  it('keeps every planted identifier through 10 stacked compactions and stays under 10% of the window', () => {
    let summary: string | undefined;
    let start = 0; // index of the first active entry (the last firstKeptEntryId)
    const entriesPerTurn = 4;
    for (let k = 1; k <= COMPACTIONS; k++) {
      const end = Math.round((k * TURNS) / COMPACTIONS) * entriesPerTurn;
      const active = entries.slice(start, end);
      const last = k === COMPACTIONS;
      // The last one is a manual hard checkpoint, so every identifier must be in the summary itself.
      const plan = planCompaction(active, {
        contextWindow: WINDOW,
        keepRecentTokens: last ? undefined : 3_000,
        estimate,
        previousSummary: summary,
      });
      expect(plan.summarizedEntryCount).toBeGreaterThan(0);
      const summarized = active.slice(0, plan.summarizedEntryCount).map((e) => e.message);
      summary = summarize(summary, summarized);
      start = plan.firstKeptEntryId === null ? end : entries.findIndex((e) => e.id === plan.firstKeptEntryId);

      // After every compaction, what the model sees (summary + kept tail) holds every identifier planted so far.
      const tail = entries
        .slice(start, end)
        .map((e) => messageText(e.message))
        .join('\n');
      const plantedSoFar = [...plantedAt].filter(([, turn]) => turn < end / entriesPerTurn).map(([id]) => id);
      for (const id of plantedSoFar) expect(`${summary}\n${tail}`).toContain(id);
      expect(countTokens(summary)).toBeLessThan(WINDOW * 0.1);
    }

    const final = summary!;
    const kept = [...plantedAt.keys()].filter((fact) => final.includes(fact)).length;
    process.stdout.write(
      `fidelity (${name}): ${kept}/${plantedAt.size} planted facts kept after ${COMPACTIONS} stacked compactions\n`,
    );
    expect(checkSummaryQuality(final, [...plantedAt.keys()])).toEqual({ ok: true, missing: [], blank: false });
    expect(countTokens(final)).toBeLessThan(WINDOW * 0.1);
    expect(final.length).toBeLessThanOrEqual(16_000);
    if (summarize === extractive)
      expect(final).toContain(`In total: ${TURNS * entriesPerTurn} messages over ${COMPACTIONS} compactions.`);
    expect(final).toContain('## Last user request\nTurn 299: please continue with step 299');
    expect(final).toContain('Please remember that deploys only happen on Tuesdays.');
    expect(final).toContain('We decided to use strategy 290 for batching.');
    // TODOs marked done later are gone; the latest open ones remain.
    expect(final).not.toContain('TODO: verify step 7 output');
    expect(final).toContain('TODO: verify step 294 output');
  });
});
