/**
 * Deterministic conversations for replay tests: turns of a user question, optionally a tool call
 * and its (large) result, then an answer. Every tenth turn plants identifiers (a ticket and a
 * path) that summaries must keep.
 */
import type { ReplayEntry, ReplayTranscript } from '../../src/replay/replay-source';
import type { TranscriptEntry } from '../../src/context/types';

export interface ConversationOptions {
  readonly turns: number;
  /** A tool call on turns not divisible by this (0: no tools). Default 2. */
  readonly toolEvery?: number;
  /** Characters of each tool result. Default 2,000. */
  readonly toolChars?: number;
  /** Words of each answer. Default 60. */
  readonly answerWords?: number;
}

const PROSE = 'the service keeps its queue short and the worker drains it before the next deploy window opens '.split(
  ' ',
);

function words(n: number, offset: number): string {
  return Array.from({ length: n }, (_, i) => PROSE[(i + offset) % PROSE.length]).join(' ');
}

/** The identifiers planted at turn `n` (every tenth turn). */
export function plantedIdentifiers(n: number): string[] {
  return [`OPS-${1000 + n}`, `/srv/app/conf-${n}.yaml`];
}

/** The conversation as replay entries, ids `t<turn>-<k>`. */
export function generateConversation(opts: ConversationOptions): ReplayEntry[] {
  const toolEvery = opts.toolEvery ?? 2;
  const toolChars = opts.toolChars ?? 2_000;
  const answerWords = opts.answerWords ?? 60;
  const out: ReplayEntry[] = [];
  for (let n = 1; n <= opts.turns; n++) {
    const planted =
      n % 10 === 0
        ? ` Please remember ticket ${plantedIdentifiers(n)[0]} and the file ${plantedIdentifiers(n)[1]}.`
        : '';
    out.push({
      id: `t${n}-0`,
      message: {
        role: 'user',
        content: `turn ${n}: what does the log say about ${words(8, n)}?${planted}`,
        timestamp: n * 1000,
      },
    });
    if (toolEvery > 0 && n % toolEvery !== 0) {
      const id = `toolu_${n}`;
      out.push({
        id: `t${n}-1`,
        message: {
          role: 'assistant',
          content: [{ type: 'toolCall', id, name: 'read_log', arguments: { n } }],
          stopReason: 'toolUse',
          timestamp: n * 1000 + 1,
        },
      });
      const body = `log ${n}: ${words(Math.ceil(toolChars / 6), n)}`.slice(0, toolChars);
      out.push({
        id: `t${n}-2`,
        message: {
          role: 'toolResult',
          toolCallId: id,
          toolName: 'read_log',
          content: [{ type: 'text', text: body }],
          isError: false,
          timestamp: n * 1000 + 2,
        },
      });
    }
    out.push({
      id: `t${n}-3`,
      message: {
        role: 'assistant',
        content: [{ type: 'text', text: `answer ${n}: ${words(answerWords, n * 3)}` }],
        stopReason: 'stop',
        timestamp: n * 1000 + 3,
      },
    });
  }
  return out;
}

/** A transcript of the generated conversation. */
export function generatedTranscript(opts: ConversationOptions): ReplayTranscript {
  return {
    source: `generated ${opts.turns}-turn conversation`,
    sessionKey: 'agent:main:main',
    entries: generateConversation(opts),
    droppedLines: 0,
  };
}

/** The same conversation as OpenClaw JSONL lines (header first, entries chained by parentId). */
export function conversationJsonl(entries: readonly ReplayEntry[]): string {
  const lines: TranscriptEntry[] = [
    { type: 'session', id: 'replay-fixture', version: 3, timestamp: new Date(0).toISOString() },
  ];
  let parent: string | null = null;
  for (const e of entries) {
    lines.push({
      type: 'message',
      id: e.id,
      parentId: parent,
      timestamp: new Date(e.message.timestamp ?? 0).toISOString(),
      message: e.message,
    });
    parent = e.id;
  }
  return `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;
}
