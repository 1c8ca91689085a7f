/**
 * Property: a session's IncrementalPipeline, fed its window turn after turn (the same message objects
 * plus new ones, as a cached window hands them), gives exactly what `runContextPipeline` gives for
 * the whole window: messages and report. New messages are clean turns, corrupted turns, or messages
 * that reach back into the clean part (a repeated call id, a result for an old call).
 */
import { prng } from '../fixtures/generate';
import { IncrementalPipeline } from '../../src/context/incremental-pipeline';
import { runContextPipeline, type ContextPipelineOptions } from '../../src/context/pipeline';
import type { AgentMessage } from '../../src/context/types';
import { corrupt, generate, int, type Rand } from './corrupt-transcripts';

const SEEDS = 800;
const STEPS = 8;

/**
 * A generated transcript as Keel's own turns store it: tool results as toolResult messages without a
 * `details` key (the generator also makes Anthropic-native results and empty `details` keys, which
 * the pipeline rewrites every time).
 */
function asStored(messages: AgentMessage[]): AgentMessage[] {
  return messages.map((m) => {
    if (m.role === 'toolResult' && 'details' in m && m.details === undefined) {
      const { details: _none, ...rest } = m;
      return rest;
    }
    const native = m.role === 'user' && Array.isArray(m.content) ? (m.content as unknown[])[0] : undefined;
    if (native && typeof native === 'object' && (native as { type?: string }).type === 'tool_result') {
      const block = native as { tool_use_id: string; content: string };
      return {
        role: 'toolResult',
        toolCallId: block.tool_use_id,
        toolName: 'read',
        content: [{ type: 'text', text: block.content }],
      };
    }
    return m;
  });
}

/** What a turn (or an outside writer) appends next. */
function nextMessages(r: Rand, seed: number, step: number): AgentMessage[] {
  const turn = asStored(generate(r, seed * 100 + step, `s${seed}n${step}c`));
  const kind = int(r, 20);
  if (kind < 16) return turn;
  if (kind < 18) return corrupt(r, turn);
  if (kind === 18) {
    // A call that repeats one of the first turn's ids, with its result.
    return [
      { role: 'user', content: `again ${step}` },
      {
        role: 'assistant',
        content: [{ type: 'toolCall', id: `s${seed}b0`, name: 'read', arguments: {} }],
        stopReason: 'toolUse',
      },
      {
        role: 'toolResult',
        toolCallId: `s${seed}b0`,
        toolName: 'read',
        content: [{ type: 'text', text: `out s${seed}b0` }],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'done' }], stopReason: 'stop' },
    ];
  }
  // A late result for an early call, then a user turn.
  return [
    {
      role: 'toolResult',
      toolCallId: `s${seed}b0`,
      toolName: 'read',
      content: [{ type: 'text', text: `out s${seed}b0` }],
    },
    { role: 'user', content: `late ${step}` },
  ];
}

describe('IncrementalPipeline (property, growing windows)', () => {
  it('gives what the whole pipeline gives, turn after turn, and runs only the new messages of a clean window', () => {
    let steps = 0;
    let tails = 0;
    for (let seed = 1; seed <= SEEDS; seed++) {
      const r = prng(seed);
      const options: ContextPipelineOptions = {
        provider: r() < 0.9 ? 'anthropic' : 'gemini',
        ...(r() < 0.3 ? { historyLimit: 2 + int(r, 10) } : {}),
      };
      const base = asStored(generate(r, seed, `s${seed}b`));
      const history: AgentMessage[] = r() < 0.1 ? corrupt(r, base) : base;
      const pipeline = new IncrementalPipeline();
      for (let step = 0; step < STEPS; step++) {
        if (step > 0) history.push(...nextMessages(r, seed, step));
        // A new array each turn, holding the same objects (as activeMessages builds it).
        const window = [...history];
        const { ran, ...incremental } = pipeline.run(window, options);
        const full = runContextPipeline([...history], options);
        if (ran === 'tail') tails++;
        try {
          expect(incremental.messages).toEqual(full.messages);
          expect(incremental.report).toEqual(full.report);
        } catch (error) {
          throw new Error(`seed ${seed}, step ${step}: ${(error as Error).message}`, { cause: error });
        }
        steps++;
      }
    }
    // Most steps append clean turns to a clean window: the tail path must carry a good share of them.
    expect(tails).toBeGreaterThan(steps / 5);
  });
});

describe('IncrementalPipeline', () => {
  const turn = (n: number): AgentMessage[] => [
    { role: 'user', content: `question ${n}` },
    {
      role: 'assistant',
      content: [{ type: 'toolCall', id: `call${n}`, name: 'read', arguments: { n } }],
      stopReason: 'toolUse',
    },
    { role: 'toolResult', toolCallId: `call${n}`, toolName: 'read', content: [{ type: 'text', text: `result ${n}` }] },
    { role: 'assistant', content: [{ type: 'text', text: `answer ${n}` }], stopReason: 'stop' },
  ];

  it('runs only the new turn of a clean window and hands back the window itself', () => {
    const pipeline = new IncrementalPipeline();
    const history = [...turn(1), ...turn(2)];
    const first = pipeline.run([...history], { provider: 'anthropic' });
    expect(first.messages).toHaveLength(8);
    expect(first.ran).toBe('full');
    history.push(...turn(3));
    const window = [...history];
    const second = pipeline.run(window, { provider: 'anthropic' });
    expect(second.messages).toBe(window);
    expect(second.ran).toBe('tail');
  });

  it('runs the whole window when a new call repeats an old id, and drops that call as the whole pipeline does', () => {
    const pipeline = new IncrementalPipeline();
    const history = [...turn(1), ...turn(2)];
    pipeline.run([...history], { provider: 'anthropic' });
    history.push(
      ...turn(1).map((m) =>
        m.role === 'user'
          ? { ...m, content: 'repeat' }
          : m.role === 'assistant' && m.stopReason === 'stop'
            ? { ...m, content: [{ type: 'text' as const, text: 'again' }] }
            : m,
      ),
    );
    const { ran, ...result } = pipeline.run([...history], { provider: 'anthropic' });
    expect(ran).toBe('full');
    expect(result.report.toolCallInputs.droppedToolCalls).toBe(1);
    expect(result).toEqual(runContextPipeline([...history], { provider: 'anthropic' }));
  });

  it('runs the whole window once a history limit starts to cut', () => {
    const pipeline = new IncrementalPipeline();
    const history = [...turn(1), ...turn(2)];
    pipeline.run([...history], { provider: 'anthropic', historyLimit: 2 });
    history.push(...turn(3));
    const result = pipeline.run([...history], { provider: 'anthropic', historyLimit: 2 });
    expect(result.ran).toBe('full');
    expect(result.report.historyLimit.droppedMessageCount).toBe(4);
  });
});
