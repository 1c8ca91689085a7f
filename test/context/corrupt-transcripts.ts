/**
 * Transcripts for the context pipeline's property tests: well-formed sessions from a seeded PRNG,
 * and 1–5 random corruptions of the kinds real transcripts show (deleted, duplicated, swapped or
 * truncated entries, partial tool calls, error stops, blank and empty messages, bad tool results,
 * stray user turns).
 */
import type { AgentMessage, AssistantMessage, ToolCallBlock } from '../../src/context/types';

export type Rand = () => number;
export const int = (r: Rand, n: number) => Math.floor(r() * n);
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[int(r, xs.length)];
const CALL_TYPES = ['toolCall', 'toolUse', 'tool_use', 'functionCall'] as const;

/** A well-formed transcript: user turns, tool rounds, final answers; tool call ids start with `idPrefix`. */
export function generate(r: Rand, seed: number, idPrefix = 't'): AgentMessage[] {
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
        calls.push(
          type === 'toolUse' || type === 'tool_use'
            ? { type, id: `${idPrefix}${ids++}`, name: 'read', input: args }
            : { type, id: `${idPrefix}${ids++}`, name: 'read', arguments: args },
        );
      }
      out.push({
        role: 'assistant',
        content: r() < 0.5 ? [{ type: 'text', text: 'working' }, ...calls] : calls,
        stopReason: 'toolUse',
      });
      for (const c of calls) {
        if (r() < 0.15) {
          out.push({
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: c.id, content: `out ${c.id}` }],
          } as unknown as AgentMessage);
        } else {
          out.push({
            role: 'toolResult',
            toolCallId: c.id,
            toolName: 'read',
            content: [{ type: 'text', text: `out ${c.id}` }],
            details: r() < 0.2 ? { raw: 1 } : undefined,
          });
        }
      }
    }
    out.push({ role: 'assistant', content: [{ type: 'text', text: `answer ${t}` }], stopReason: 'stop' });
  }
  return out;
}

/** Applies 1–5 random corruptions (the input is not changed). */
export function corrupt(r: Rand, messages: AgentMessage[]): AgentMessage[] {
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
      case 2: {
        // swap two entries
        const j = Math.min(m.length - 1, i + 1 + int(r, 3));
        [m[i], m[j]] = [m[j], m[i]];
        break;
      }
      case 3: // truncate head or tail
        m = r() < 0.5 ? m.slice(i) : m.slice(0, i + 1);
        break;
      case 4: {
        // partial tool call
        const a = m[i];
        if (a.role !== 'assistant') break;
        const calls = a.content.filter((b) => b.type !== 'text' && b.type !== 'thinking') as ToolCallBlock[];
        if (calls.length === 0) break;
        const at = a.content.indexOf(pick(r, calls));
        const victim = { ...a.content[at] } as Partial<ToolCallBlock> & Record<string, unknown>;
        const how = int(r, 5);
        if (how === 0) delete victim.id;
        else if (how === 1) victim.name = pick(r, ['', ' ', 'bad name', 'x'.repeat(70), ' read ']);
        else if (how === 2) {
          delete victim.arguments;
          delete victim.input;
        } else if (how === 3) victim.id = '';
        else {
          delete victim.input;
          victim.arguments = 'not json' as never;
        }
        m[i] = { ...a, content: a.content.map((b, n) => (n === at ? (victim as unknown as ToolCallBlock) : b)) };
        break;
      }
      case 5: {
        // error / aborted stop
        const a = m[i];
        if (a.role === 'assistant') m[i] = { ...a, stopReason: pick(r, ['error', 'aborted']) } as AssistantMessage;
        break;
      }
      case 6: // blank user text inserted
        m.splice(i, 0, { role: 'user', content: pick(r, ['', '   ', [{ type: 'text', text: ' ' }]]) as string });
        break;
      case 7: {
        // empty assistant
        m.splice(i, 0, {
          role: 'assistant',
          content: r() < 0.5 ? [] : [{ type: 'text', text: '' }],
          stopReason: 'stop',
        });
        break;
      }
      case 8: {
        // tool result with empty name or unknown id
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
