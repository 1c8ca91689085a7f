import { classifySession } from '../../src/profile/classify-session';
import { estimateContext } from '../../src/profile/context-estimate';
import type { ProfileEntry } from '../../src/profile/profile-entries';
import type { WorkStyle } from '../../src/context/work-style-presets';
import { prng } from '../fixtures/generate';

const T0 = Date.UTC(2026, 10, 25, 9, 0);
const minute = 60_000;

/** Builds a transcript turn by turn: each turn has a pause before it, tool calls with result sizes, and message sizes. */
class SessionBuilder {
  readonly entries: ProfileEntry[] = [];
  private at = T0;
  private n = 0;

  turn(o: { pauseMs: number; userTokens: number; replyTokens: number; results?: number[] }): this {
    this.at += o.pauseMs;
    this.push('user', o.userTokens, 0);
    const results = o.results ?? [];
    if (results.length > 0) {
      this.push('assistant', 60 * results.length, results.length);
      for (const r of results) this.push('toolResult', r, 0);
    }
    this.push('assistant', o.replyTokens, 0);
    return this;
  }

  compaction(summaryTokens: number, firstKeptEntryId: string): this {
    this.at += 1_000;
    this.entries.push({
      id: `c${this.n++}`,
      kind: 'compaction',
      at: this.at,
      tokens: summaryTokens,
      toolCalls: 0,
      firstKeptEntryId,
    });
    return this;
  }

  private push(kind: ProfileEntry['kind'], tokens: number, toolCalls: number): void {
    this.at += 5_000;
    this.entries.push({ id: `e${this.n++}`, kind, at: this.at, tokens, toolCalls });
  }
}

/** Generated sessions of each work-style pattern; `r` varies sizes, counts and pauses. */
const generators: Record<WorkStyle, (r: () => number) => ProfileEntry[]> = {
  // Audits, tests, debugging: several reads per turn, large outputs, short pauses.
  'tool-heavy': (r) => {
    const s = new SessionBuilder();
    for (let t = 0; t < 20 + Math.floor(r() * 20); t++) {
      s.turn({
        pauseMs: (20 + r() * 60) * 1_000,
        userTokens: 40 + r() * 100,
        replyTokens: 150 + r() * 300,
        results: Array.from({ length: 2 + Math.floor(r() * 5) }, () => 800 + r() * 4_000),
      });
    }
    return s.entries;
  },
  // Planning and discussion: long messages, a tool call now and then.
  conversational: (r) => {
    const s = new SessionBuilder();
    for (let t = 0; t < 15 + Math.floor(r() * 20); t++) {
      s.turn({
        pauseMs: (1 + r() * 4) * minute,
        userTokens: 150 + r() * 350,
        replyTokens: 400 + r() * 600,
        results: r() < 0.2 ? [200 + r() * 600] : [],
      });
    }
    return s.entries;
  },
  // Discuss → code → test → discuss: alternating talk and tool turns.
  mixed: (r) => {
    const s = new SessionBuilder();
    for (let t = 0; t < 20 + Math.floor(r() * 20); t++) {
      const tools = t % 2 === 1;
      s.turn({
        pauseMs: (30 + r() * 120) * 1_000,
        userTokens: 200 + r() * 300,
        replyTokens: 500 + r() * 700,
        results: tools ? Array.from({ length: 1 + Math.floor(r() * 2) }, () => 800 + r() * 1_400) : [],
      });
    }
    return s.entries;
  },
  // Monitoring + incidents: status checks every ~20 minutes, then bursts of many calls.
  bursty: (r) => {
    const s = new SessionBuilder();
    const incidents = 2 + Math.floor(r() * 2);
    for (let i = 0; i < incidents; i++) {
      for (let q = 0; q < 3 + Math.floor(r() * 4); q++)
        s.turn({
          pauseMs: (15 + r() * 20) * minute,
          userTokens: 30 + r() * 50,
          replyTokens: 80 + r() * 100,
          results: [150 + r() * 200],
        });
      for (let b = 0; b < 2 + Math.floor(r() * 3); b++) {
        s.turn({
          pauseMs: (b === 0 ? 15 + r() * 20 : 0.5 + r()) * minute,
          userTokens: 60 + r() * 100,
          replyTokens: 200 + r() * 300,
          results: Array.from({ length: 6 + Math.floor(r() * 6) }, () => 500 + r() * 3_000),
        });
      }
    }
    return s.entries;
  },
};

describe('classifySession on generated sessions of each pattern', () => {
  it.each(Object.keys(generators) as WorkStyle[])(
    'picks %s for every one of 25 generated sessions, clearly',
    (style) => {
      for (let seed = 1; seed <= 25; seed++) {
        const result = classifySession(generators[style](prng(seed)));
        expect({ seed, style: result.style, confidence: result.confidence }).toEqual({
          seed,
          style,
          confidence: 'clear',
        });
      }
    },
  );

  it('reports the evidence: token shares, calls per turn, gaps and bursts', () => {
    const s = new SessionBuilder()
      .turn({ pauseMs: 0, userTokens: 100, replyTokens: 100, results: [800] })
      .turn({ pauseMs: 30 * minute, userTokens: 100, replyTokens: 100, results: [100, 100, 100, 100, 100] })
      .turn({ pauseMs: minute, userTokens: 100, replyTokens: 100 });
    const { evidence, reasons } = classifySession(s.entries);
    expect(evidence.turns).toBe(3);
    expect(evidence.toolCalls).toBe(6);
    // Tool results 800 + 500; messages: 3 users, 3 replies and two tool-call messages (60 and 300).
    expect(evidence.tokens).toEqual({ toolResults: 1_300, messages: 600 + 360, summaries: 0 });
    expect(evidence.toolShare).toBeCloseTo(1_300 / 2_260, 5);
    expect(evidence.toolCallsPerTurn).toEqual({ mean: 2, max: 5 });
    expect(evidence.gaps.quietPeriods).toBe(1);
    expect(evidence.gaps.longestMs).toBe(30 * minute + 5_000);
    expect(evidence.bursts).toEqual({ turns: 1, toolCallShare: 5 / 6, episodes: 1 });
    expect(reasons[0]).toBe('58% of context tokens come from tool results, 42% from messages');
  });

  it('long pauses alone do not make a session bursty: tool calls must cluster in a minority of turns', () => {
    const s = new SessionBuilder();
    for (let t = 0; t < 10; t++)
      s.turn({
        pauseMs: t % 3 === 0 ? 40 * minute : minute,
        userTokens: 50,
        replyTokens: 200,
        results: [2_000, 2_000, 2_000, 2_000, 2_000, 2_000],
      });
    const result = classifySession(s.entries);
    expect(result.style).toBe('tool-heavy');
    expect(result.reasons).toContain('3 quiet periods, but tool calls are not clustered in bursts');
  });

  it('few turns are classified, but say there is little evidence', () => {
    const s = new SessionBuilder().turn({ pauseMs: 0, userTokens: 50, replyTokens: 100, results: [9_000] });
    expect(classifySession(s.entries)).toMatchObject({ style: 'tool-heavy', confidence: 'little-evidence' });
    expect(classifySession([])).toMatchObject({ style: 'conversational', confidence: 'little-evidence' });
  });
});

describe('borderline sessions are stable', () => {
  /** Turns whose tool results are `share` of (results + messages) tokens exactly. */
  function atShare(share: number, turns = 10): ProfileEntry[] {
    const s = new SessionBuilder();
    const messages = 1_000;
    const result = Math.round((share * messages) / (1 - share));
    for (let t = 0; t < turns; t++)
      s.turn({ pauseMs: minute, userTokens: 400, replyTokens: messages - 400 - 60, results: [result] });
    return s.entries;
  }

  it('near the tool-heavy boundary the configured side wins, and one more turn does not flip the advice', () => {
    for (const share of [0.61, 0.63, 0.65, 0.67, 0.69]) {
      expect([share, classifySession(atShare(share), 'tool-heavy').style]).toEqual([share, 'tool-heavy']);
      expect([share, classifySession(atShare(share), 'mixed').style]).toEqual([share, 'mixed']);
      expect(classifySession(atShare(share, 11), 'mixed').style).toBe('mixed');
      expect(classifySession(atShare(share)).confidence).toBe('borderline');
    }
    // A style that is not one of the two sides does not pull the answer: the boundary decides.
    expect(classifySession(atShare(0.63), 'conversational').style).toBe('mixed');
    expect(classifySession(atShare(0.66), 'conversational').style).toBe('tool-heavy');
    expect(classifySession(atShare(0.63), 'tool-heavy').reasons.at(-1)).toBe(
      'near the 65% boundary: kept the configured tool-heavy',
    );
  });

  it('near the conversational boundary too; away from boundaries the configured style does not matter', () => {
    expect(classifySession(atShare(0.33), 'mixed').style).toBe('mixed');
    expect(classifySession(atShare(0.37), 'conversational').style).toBe('conversational');
    expect(classifySession(atShare(0.2), 'tool-heavy')).toMatchObject({ style: 'conversational', confidence: 'clear' });
    expect(classifySession(atShare(0.8), 'conversational')).toMatchObject({ style: 'tool-heavy', confidence: 'clear' });
    expect(classifySession(atShare(0.5), 'bursty')).toMatchObject({ style: 'mixed', confidence: 'clear' });
  });

  it('the same entries always give the same answer', () => {
    const entries = generators.mixed(prng(3));
    expect(classifySession([...entries])).toEqual(classifySession(entries));
  });
});

describe('estimateContext (typical ranges)', () => {
  it('counts the active window since the last compaction, with one summary, as ranges beside the measured tokens', () => {
    const s = new SessionBuilder()
      .turn({ pauseMs: 0, userTokens: 100, replyTokens: 100, results: [1_000] })
      .turn({ pauseMs: minute, userTokens: 150, replyTokens: 300, results: [2_000, 3_000] });
    // e0 u, e1 a(call), e2 r, e3 a | e4 u, e5 a(calls), e6 r, e7 r, e8 a: the compaction keeps from e4.
    s.compaction(2_500, 'e4');
    // The baseline is what the session's status measured: system 1,000 + workspace 300 + tools 1,200.
    const estimate = estimateContext(s.entries, 200_000, {
      systemTokens: 1_000,
      bootstrapTokens: 300,
      toolTokens: 1_200,
    });
    expect(estimate.parts).toEqual([
      { part: 'fixed baseline', count: 1, low: 2_500, high: 2_500, measured: 2_500 },
      { part: 'user messages', count: 1, low: 100, high: 500, measured: 150 },
      { part: 'assistant replies', count: 2, low: 400, high: 2_000, measured: 120 + 300 },
      { part: 'tool results', count: 2, low: 1_000, high: 10_000, measured: 5_000 },
      { part: 'compaction summary', count: 1, low: 2_000, high: 5_000, measured: 2_500 },
    ]);
    expect(estimate.baseline).toEqual({ systemTokens: 1_000, bootstrapTokens: 300, toolTokens: 1_200 });
    expect(estimate.total).toEqual({ low: 6_000, high: 20_000 });
  });

  it('leaves the baseline unknown, out of the total, when no status measured it: never a guessed share of the window', () => {
    const s = new SessionBuilder().turn({ pauseMs: 0, userTokens: 100, replyTokens: 100, results: [] });
    const estimate = estimateContext(s.entries, 200_000);
    expect(estimate.baseline).toBe('unknown');
    expect(estimate.parts.map((p) => p.part)).not.toContain('fixed baseline');
    expect(estimate.total.low).toBe(estimate.parts.reduce((n, p) => n + p.low, 0));
  });

  it('takes the window an operator’s revert restored, but counts the revert as no compaction of the session’s own', () => {
    const s = new SessionBuilder()
      .turn({ pauseMs: 0, userTokens: 100, replyTokens: 100, results: [1_000] })
      .turn({ pauseMs: minute, userTokens: 150, replyTokens: 300, results: [2_000, 3_000] });
    s.compaction(2_500, 'e4');
    // `keel compactions revert` of the session's only compaction: no summary, the whole transcript is the window again.
    s.entries.push({
      id: 'rev',
      kind: 'compaction',
      at: T0 + 10 * minute,
      tokens: 0,
      toolCalls: 0,
      firstKeptEntryId: 'e0',
      revert: true,
    });
    expect(classifySession(s.entries).evidence.compactions).toBe(1);
    expect(estimateContext(s.entries, 200_000).parts.find((p) => p.part === 'tool results')).toMatchObject({
      count: 3,
      measured: 6_000,
    });
  });
});
