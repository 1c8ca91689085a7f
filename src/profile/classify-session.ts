/**
 * Classifies a session's work style (tool-heavy, conversational, mixed, bursty: the presets of work-style-presets.ts)
 * from its transcript, with the evidence: where the context's tokens come from, tool calls per
 * turn, and how the turns are spread over time. Pure: the same entries give the same answer.
 */
import type { WorkStyle } from '../context/work-style-presets';
import type { ProfileEntry } from './profile-entries';

/** A pause this long between turns is a quiet period (bursty sessions are busy turns between long quiet periods). */
const QUIET_GAP_MS = 10 * 60_000;
/** A turn with at least this many tool calls is a burst (a tool-heavy operation makes more than five calls). */
const BURST_TOOL_CALLS = 5;
/** Tool results' share of the context tokens at or above which a session is tool-heavy, at or below which conversational. */
const TOOL_HEAVY_SHARE = 0.65;
const CONVERSATIONAL_SHARE = 0.35;
/** Within this much of a boundary the session is borderline, and keeps its current style if that is one of the two sides. */
const BORDERLINE_MARGIN = 0.05;
/** Fewer turns than this say little about a pattern. */
const MIN_TURNS = 3;

export interface SessionEvidence {
  readonly turns: number;
  readonly toolCalls: number;
  readonly compactions: number;
  /** Estimated tokens by source, over the whole transcript. */
  readonly tokens: { readonly toolResults: number; readonly messages: number; readonly summaries: number };
  /** Tool results' share of tool-result + message tokens (0…1). */
  readonly toolShare: number;
  readonly toolCallsPerTurn: { readonly mean: number; readonly max: number };
  /** Pauses between one turn's last entry and the next turn's first. */
  readonly gaps: { readonly medianMs: number; readonly longestMs: number; readonly quietPeriods: number };
  /** Turns with at least BURST_TOOL_CALLS calls, and the share of all tool calls they made. */
  readonly bursts: { readonly turns: number; readonly toolCallShare: number; readonly episodes: number };
  /** From the first entry to the last. */
  readonly spanMs: number;
}

export interface SessionClass {
  readonly style: WorkStyle;
  /** clear; borderline (near a boundary: `style` kept the current style when it could); little-evidence (too few turns). */
  readonly confidence: 'clear' | 'borderline' | 'little-evidence';
  /** Why, one line per reason, in plain words. */
  readonly reasons: string[];
  readonly evidence: SessionEvidence;
}

interface Turn {
  readonly start: number;
  readonly end: number;
  readonly toolCalls: number;
}

/** Splits entries into turns: each user message starts one; everything until the next belongs to it. */
function turnsOf(entries: readonly ProfileEntry[]): Turn[] {
  const turns: Array<{ start: number; end: number; toolCalls: number }> = [];
  for (const e of entries) {
    if (e.kind === 'compaction') continue;
    if (e.kind === 'user' || turns.length === 0) turns.push({ start: e.at, end: e.at, toolCalls: 0 });
    const turn = turns[turns.length - 1]!;
    turn.end = Math.max(turn.end, e.at);
    turn.toolCalls += e.toolCalls;
  }
  return turns;
}

function median(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : Math.round((sorted[mid - 1]! + sorted[mid]!) / 2);
}

/** The numbers the classification reads, over the whole transcript (compacted entries included). */
function sessionEvidence(entries: readonly ProfileEntry[]): SessionEvidence {
  const tokens = { toolResults: 0, messages: 0, summaries: 0 };
  let toolCalls = 0;
  let compactions = 0;
  for (const e of entries) {
    if (e.kind === 'toolResult') tokens.toolResults += e.tokens;
    else if (e.kind === 'compaction') {
      // A revert restores an earlier summary: neither a new summary nor a compaction of the session's own.
      if (e.revert) continue;
      tokens.summaries += e.tokens;
      compactions++;
    } else tokens.messages += e.tokens;
    toolCalls += e.toolCalls;
  }
  const turns = turnsOf(entries);
  const gaps = turns.slice(1).map((t, i) => Math.max(0, t.start - turns[i]!.end));
  const quietBefore = turns.map((_, i) => i > 0 && gaps[i - 1]! >= QUIET_GAP_MS);
  const burstTurns = turns.filter((t) => t.toolCalls >= BURST_TOOL_CALLS);
  // Episodes: runs of turns between quiet periods; a burst episode holds at least one burst turn.
  let episodes = 0;
  let inEpisodeBurst = false;
  turns.forEach((t, i) => {
    if (quietBefore[i]) inEpisodeBurst = false;
    if (t.toolCalls >= BURST_TOOL_CALLS && !inEpisodeBurst) {
      episodes++;
      inEpisodeBurst = true;
    }
  });
  const counted = tokens.toolResults + tokens.messages;
  const times = entries.map((e) => e.at);
  return {
    turns: turns.length,
    toolCalls,
    compactions,
    tokens,
    toolShare: counted === 0 ? 0 : tokens.toolResults / counted,
    toolCallsPerTurn: {
      mean: turns.length === 0 ? 0 : toolCalls / turns.length,
      max: Math.max(0, ...turns.map((t) => t.toolCalls)),
    },
    gaps: { medianMs: median(gaps), longestMs: Math.max(0, ...gaps), quietPeriods: quietBefore.filter(Boolean).length },
    bursts: {
      turns: burstTurns.length,
      toolCallShare: toolCalls === 0 ? 0 : burstTurns.reduce((n, t) => n + t.toolCalls, 0) / toolCalls,
      episodes,
    },
    spanMs: times.length === 0 ? 0 : Math.max(...times) - Math.min(...times),
  };
}

const pct = (share: number) => `${Math.round(share * 100)}%`;
const minutes = (ms: number) =>
  ms >= 3_600_000 ? `${(ms / 3_600_000).toFixed(1)} h` : `${Math.round(ms / 60_000)} min`;

/**
 * The session's work style. Bursty first: at least two quiet periods and tool calls clustered in
 * burst turns that are at most 60% of the turns, in at least two separate episodes. Otherwise the
 * tool-result share decides (≥ 65% tool-heavy, ≤ 35% conversational when turns average under two
 * calls, mixed between). Near a share boundary `current` (the agent's configured style) wins when it
 * is one of the two sides, so a session on the edge does not flip its advice with every turn.
 */
export function classifySession(entries: readonly ProfileEntry[], current?: WorkStyle): SessionClass {
  const evidence = sessionEvidence(entries);
  const { toolShare, bursts, gaps, turns, toolCallsPerTurn } = evidence;
  const reasons: string[] = [
    `${pct(toolShare)} of context tokens come from tool results, ${pct(1 - toolShare)} from messages`,
    `${toolCallsPerTurn.mean.toFixed(1)} tool calls per turn on average (at most ${toolCallsPerTurn.max}) over ${turns} turns`,
  ];
  const confidence = (borderline: boolean): SessionClass['confidence'] =>
    turns < MIN_TURNS ? 'little-evidence' : borderline ? 'borderline' : 'clear';

  const burstyShape = gaps.quietPeriods >= 2 && bursts.episodes >= 2 && bursts.turns <= turns * 0.6;
  if (burstyShape && bursts.toolCallShare >= 0.6) {
    reasons.push(
      `${gaps.quietPeriods} quiet periods of ${minutes(QUIET_GAP_MS)} or more (longest ${minutes(gaps.longestMs)}), and ${pct(bursts.toolCallShare)} of tool calls in ${bursts.turns} burst turns (${BURST_TOOL_CALLS}+ calls) across ${bursts.episodes} separate episodes`,
    );
    return {
      style: 'bursty',
      confidence: confidence(bursts.toolCallShare < 0.6 + BORDERLINE_MARGIN),
      reasons,
      evidence,
    };
  }
  if (gaps.quietPeriods >= 2)
    reasons.push(`${gaps.quietPeriods} quiet periods, but tool calls are not clustered in bursts`);

  const near = (boundary: number) => Math.abs(toolShare - boundary) < BORDERLINE_MARGIN;
  const fewCalls = toolCallsPerTurn.mean < 2;
  let style: WorkStyle =
    toolShare >= TOOL_HEAVY_SHARE
      ? 'tool-heavy'
      : toolShare <= CONVERSATIONAL_SHARE && fewCalls
        ? 'conversational'
        : 'mixed';
  let borderline = false;
  if (near(TOOL_HEAVY_SHARE)) {
    borderline = true;
    if (current === 'tool-heavy' || current === 'mixed') style = current;
  } else if (near(CONVERSATIONAL_SHARE) && fewCalls) {
    borderline = true;
    if (current === 'conversational' || current === 'mixed') style = current;
  }
  if (style === 'tool-heavy') reasons.push('most of the context is tool output');
  else if (style === 'conversational') reasons.push('most of the context is conversation, with few tool calls');
  else if (toolShare <= CONVERSATIONAL_SHARE) reasons.push('mostly conversation, but many small tool calls per turn');
  else reasons.push('tool output and conversation are roughly even');
  if (borderline)
    reasons.push(
      `near the ${near(TOOL_HEAVY_SHARE) ? pct(TOOL_HEAVY_SHARE) : pct(CONVERSATIONAL_SHARE)} boundary${current === style ? `: kept the configured ${current}` : ''}`,
    );
  return { style, confidence: confidence(borderline), reasons, evidence };
}
