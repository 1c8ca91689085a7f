/**
 * A 1,800-line session (Pi / OpenClaw JSONL, from the fixture generator) with natural-language facts
 * planted across it — decisions, preferences, an instruction, a deadline, a person's role, an error
 * and its cause — and the noise a real session has around them: routine requests, routine "I'll
 * check…" promises, failed tool calls.
 */
import type { AgentMessage, MessageEntry, TranscriptEntry } from '../../src/context/types';
import { itemTime } from '../../src/compaction/summary-items';
import { generateSession } from '../fixtures/generate';

/** One planted fact: who said it, where (share of the session), and the words a summary must keep. */
export interface PlantedFact {
  readonly role: 'user' | 'assistant';
  readonly at: number;
  readonly text: string;
}

export const PLANTED_FACTS: readonly PlantedFact[] = [
  { role: 'user', at: 0.05, text: 'Dana Whitfield is our DBA and approves every schema change.' },
  {
    role: 'assistant',
    at: 0.15,
    text: 'The nightly export failed because the disk on the reporting replica filled up.',
  },
  { role: 'user', at: 0.3, text: 'I prefer small pull requests over one big change.' },
  {
    role: 'user',
    at: 0.5,
    text: "Let's decide: use advisory locks per account instead of SERIALIZABLE. Write that down.",
  },
  { role: 'user', at: 0.65, text: 'The compliance report is due by Friday, March 13.' },
  { role: 'user', at: 0.8, text: 'From now on, never run migrations during business hours.' },
  { role: 'assistant', at: 0.9, text: 'I will send Dana the rollback plan before 5pm tomorrow.' },
];

/** Lines of the session file after its header. */
export const SESSION_LINES = 1_800;

function textOf(message: AgentMessage): string {
  if (message.role === 'user') return typeof message.content === 'string' ? message.content : '';
  return message.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
}

/** Replaces the message's text (the first text block of an assistant message). */
function withText(message: AgentMessage, text: string): AgentMessage {
  if (message.role === 'user') return { ...message, content: text };
  if (message.role !== 'assistant') return message;
  const i = message.content.findIndex((b) => b.type === 'text');
  return { ...message, content: message.content.map((b, j) => (j === i ? { type: 'text' as const, text } : b)) };
}

/** The planted session's entries (header first) and, per fact, the time its message carries. */
export function plantedSession(sessionId: string): { entries: TranscriptEntry[]; plantedAt: Map<string, string> } {
  const entries = generateSession({ seed: 44, entries: SESSION_LINES, sessionId, compactionEvery: 0 });
  const messageIndexes = entries.flatMap((e, i) => (e.type === 'message' ? [i] : []));
  const plantedAt = new Map<string, string>();
  let noise = 0;
  for (const i of messageIndexes) {
    const entry = entries[i] as MessageEntry;
    const message = entry.message;
    if (message.role === 'toolResult' || !textOf(message)) continue;
    // Routine requests and promises: what crowds a summary's budget in a real session.
    const routine =
      message.role === 'user'
        ? `Please look at the queue metrics for shard ${noise++}.`
        : noise++ % 2
          ? `I'll check the replica lag on shard ${noise} next.`
          : '';
    if (routine) entries[i] = { ...entry, message: withText(message, `${textOf(message)}. ${routine}`) };
  }
  for (const fact of PLANTED_FACTS) {
    const from = Math.floor(messageIndexes.length * fact.at);
    const i = messageIndexes.slice(from).find((j) => {
      const m = (entries[j] as MessageEntry).message;
      return m.role === fact.role && textOf(m) !== '';
    })!;
    const entry = entries[i] as MessageEntry;
    entries[i] = {
      ...entry,
      message: withText(entry.message, `${textOf(entry.message).replace(/\.?$/, '.')} ${fact.text}`),
    };
    plantedAt.set(fact.text, itemTime(entry.message.timestamp!));
  }
  return { entries, plantedAt };
}
