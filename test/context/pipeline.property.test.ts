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
import type { AgentMessage, ToolResultMessage } from '../../src/context/types';
import { corrupt, generate, int } from './corrupt-transcripts';

const RUNS = 10_000;

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
    const pieces =
      typeof m.content === 'string' ? [m.content] : m.content.flatMap((b) => (b.type === 'text' ? [b.text] : []));
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
      const guaranteed = userTurnTexts(input)
        .slice(historyLimit ? -historyLimit : 0)
        .flat();
      const outputPieces = userTurnTexts(out)
        .flat()
        .flatMap((p) => p.split('\n\n'));
      let cursor = 0;
      for (const piece of guaranteed) {
        const at = outputPieces.indexOf(piece, cursor);
        if (at === -1)
          throw new Error(
            `seed ${seed}: user text "${piece}" was lost\n${JSON.stringify(input)}\n${JSON.stringify(out)}`,
          );
        cursor = at + 1;
      }
      // No user text is invented.
      const inputPieces = new Set(userTurnTexts(input).flat());
      for (const piece of outputPieces)
        if (!inputPieces.has(piece)) throw new Error(`seed ${seed}: invented user text "${piece}"`);
      // Every tool result is from the input or a marked synthetic error.
      for (const m of out) {
        if (m.role !== 'toolResult') continue;
        const synthetic =
          (m as ToolResultMessage).isError &&
          m.content.some((b) => b.type === 'text' && b.text === MISSING_TOOL_RESULT_TEXT);
        if (!synthetic && !m.content.some((b) => b.type === 'text' && b.text === `out ${m.toolCallId}`)) {
          throw new Error(`seed ${seed}: tool result ${m.toolCallId} is neither from the input nor synthetic`);
        }
      }
    }
    // The corruptions must actually break most transcripts, or the property proves little.
    expect(invalidInputs).toBeGreaterThan(RUNS / 2);
  });
});
