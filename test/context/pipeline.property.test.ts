/**
 * Property: for any corrupted transcript, runContextPipeline(…, 'anthropic') yields messages Anthropic
 * accepts, and loses no user text the rules did not require dropping.
 *
 * Drops the rules allow (everything else must survive, in order):
 *  1. blank text (empty or whitespace-only) — providers reject it;
 *  2. user turns before the history-limit cut — only the last `historyLimit` user turns of the input
 *     (user messages with non-blank text) are guaranteed to survive. Merging consecutive user messages
 *     only makes turns larger, so these turns are always within the kept window.
 * Nothing else may remove user text: merges join it, pairing moves it after tool results.
 */
import { assertProviderValid } from '../support/assert-provider-valid';
import { prng } from '../fixtures/generate';
import { MISSING_TOOL_RESULT_TEXT } from '../../src/context/message-parts';
import { runContextPipeline } from '../../src/context/pipeline';
import type { AgentMessage, AssistantMessage, ToolCallBlock, ToolResultMessage } from '../../src/context/types';

const RUNS = 10_000;

type Rand = () => number;
const int = (r: Rand, n: number) => Math.floor(r() * n);
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[int(r, xs.length)];
const CALL_TYPES = ['toolCall', 'toolUse', 'tool_use', 'functionCall'] as const;

/** A well-formed transcript: user turns, tool rounds, final answers. */
function generate(r: Rand, seed: number): AgentMessage[] {
  const out: AgentMessage[] = [];
  let ids = 0;
  const turns = 1 + int(r, 6);
  for (let t = 0; t < turns; t += 1) {
    out.push({ role: 'user', content: r() < 0.3 ? [{ type: 'text', text: `s${seed}u${t}` }] : `s${seed}u${t}` });
    for (let round = int(r, 3); round > 0; round -= 1) {
      const calls: ToolCallBlock[] = [];
      for (let c = 1 + int(r, 3); c > 0; c -= 1) {
        const type = pick(r, CALL_TYPES);
        const args = { path: `f${ids}` };
        calls.push(type === 'toolUse' || type === 'tool_use' ? { type, id: `t${ids++}`, name: 'read', input: args } : { type, id: `t${ids++}`, name: 'read', arguments: args });
      }
      out.push({ role: 'assistant', content: r() < 0.5 ? [{ type: 'text', text: 'working' }, ...calls] : calls, stopReason: 'toolUse' });
      for (const c of calls) {
        if (r() < 0.15) {
          out.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: c.id, content: `out ${c.id}` }] } as unknown as AgentMessage);
        } else {
          out.push({ role: 'toolResult', toolCallId: c.id, toolName: 'read', content: [{ type: 'text', text: `out ${c.id}` }], details: r() < 0.2 ? { raw: 1 } : undefined });
        }
      }
    }
    out.push({ role: 'assistant', content: [{ type: 'text', text: `answer ${t}` }], stopReason: 'stop' });
  }
  return out;
}

/** Applies 1–5 random corruptions. */
function corrupt(r: Rand, messages: AgentMessage[]): AgentMessage[] {
  let m = messages.slice();
  for (let k = 1 + int(r, 5); k > 0 && m.length > 0; k -= 1) {
    const i = int(r, m.length);
    switch (int(r, 10)) {
      case 0: // delete
        m.splice(i, 1);
        break;
      case 1: // duplicate (in place or somewhere else)
        m.splice(r() < 0.5 ? i + 1 : int(r, m.length + 1), 0, structuredClone(m[i]));
        break;
      case 2: { // swap two entries
        const j = Math.min(m.length - 1, i + 1 + int(r, 3));
        [m[i], m[j]] = [m[j], m[i]];
        break;
      }
      case 3: // truncate head or tail
        m = r() < 0.5 ? m.slice(i) : m.slice(0, i + 1);
        break;
      case 4: { // partial tool call
        const a = m[i];
        if (a.role !== 'assistant') break;
        const calls = a.content.filter((b) => b.type !== 'text' && b.type !== 'thinking') as ToolCallBlock[];
        if (calls.length === 0) break;
        const at = a.content.indexOf(pick(r, calls));
        const victim = { ...a.content[at] } as Partial<ToolCallBlock> & Record<string, unknown>;
        const how = int(r, 5);
        if (how === 0) delete victim.id;
        else if (how === 1) victim.name = pick(r, ['', ' ', 'bad name', 'x'.repeat(70), ' read ']);
        else if (how === 2) { delete victim.arguments; delete victim.input; }
        else if (how === 3) victim.id = '';
        else { delete victim.input; victim.arguments = 'not json' as never; }
        m[i] = { ...a, content: a.content.map((b, n) => (n === at ? (victim as unknown as ToolCallBlock) : b)) };
        break;
      }
      case 5: { // error / aborted stop
        const a = m[i];
        if (a.role === 'assistant') m[i] = { ...a, stopReason: pick(r, ['error', 'aborted']) } as AssistantMessage;
        break;
      }
      case 6: // blank user text inserted
        m.splice(i, 0, { role: 'user', content: pick(r, ['', '   ', [{ type: 'text', text: ' ' }]]) as string });
        break;
      case 7: { // empty assistant
        m.splice(i, 0, { role: 'assistant', content: r() < 0.5 ? [] : [{ type: 'text', text: '' }], stopReason: 'stop' });
        break;
      }
      case 8: { // tool result with empty name or unknown id
        const x = m[i];
        if (x.role === 'toolResult') m[i] = r() < 0.5 ? { ...x, toolName: '' } : { ...x, toolCallId: `ghost${i}` };
        break;
      }
      default: // stray user turn dropped into the middle of a tool batch
        m.splice(i, 0, { role: 'user', content: `stray${i}-${k}` });
    }
  }
  return m;
}

function isValid(messages: AgentMessage[]): boolean {
  try {
    assertProviderValid(messages);
    return true;
  } catch {
    return false;
  }
}

function userTurnTexts(messages: AgentMessage[]): string[][] {
  const turns: string[][] = [];
  for (const m of messages) {
    if (m.role !== 'user') continue;
    const pieces = typeof m.content === 'string'
      ? [m.content]
      : m.content.flatMap((b) => (b.type === 'text' ? [b.text] : []));
    const nonBlank = pieces.filter((p) => p.trim().length > 0);
    if (nonBlank.length > 0) turns.push(nonBlank);
  }
  return turns;
}

describe('runContextPipeline (property, 10,000 corrupted transcripts)', () => {
  it('always yields provider-valid messages and keeps every user text the rules do not allow dropping', () => {
    let invalidInputs = 0;
    for (let seed = 1; seed <= RUNS; seed += 1) {
      const r = prng(seed);
      const input = corrupt(r, generate(r, seed));
      const historyLimit = r() < 0.3 ? 1 + int(r, 4) : undefined;
      const before = JSON.stringify(input);
      if (!isValid(input)) invalidInputs += 1;
      let out: AgentMessage[];
      try {
        out = runContextPipeline(input, { provider: 'anthropic', historyLimit }).messages;
        assertProviderValid(out);
      } catch (error) {
        throw new Error(`seed ${seed}: ${(error as Error).message}\n${JSON.stringify(input)}`, { cause: error });
      }
      if (JSON.stringify(input) !== before) throw new Error(`seed ${seed}: the input was mutated`);

      // Every guaranteed user text survives, in order.
      const guaranteed = userTurnTexts(input).slice(historyLimit ? -historyLimit : 0).flat();
      const outputPieces = userTurnTexts(out).flat().flatMap((p) => p.split('\n\n'));
      let cursor = 0;
      for (const piece of guaranteed) {
        const at = outputPieces.indexOf(piece, cursor);
        if (at === -1) throw new Error(`seed ${seed}: user text "${piece}" was lost\n${JSON.stringify(input)}\n${JSON.stringify(out)}`);
        cursor = at + 1;
      }
      // No user text is invented.
      const inputPieces = new Set(userTurnTexts(input).flat());
      for (const piece of outputPieces) if (!inputPieces.has(piece)) throw new Error(`seed ${seed}: invented user text "${piece}"`);
      // Every tool result is from the input or a marked synthetic error.
      for (const m of out) {
        if (m.role !== 'toolResult') continue;
        const synthetic = (m as ToolResultMessage).isError && m.content.some((b) => b.type === 'text' && b.text === MISSING_TOOL_RESULT_TEXT);
        if (!synthetic && !m.content.some((b) => b.type === 'text' && b.text === `out ${m.toolCallId}`)) {
          throw new Error(`seed ${seed}: tool result ${m.toolCallId} is neither from the input nor synthetic`);
        }
      }
    }
    // The corruptions must actually break most transcripts, or the property proves little.
    expect(invalidInputs).toBeGreaterThan(RUNS / 2);
  });
});
