/**
 * A fake model that plays a parent and its subagents at once, by reading each request: the parent
 * spawns, waits and acknowledges announces; a child calls the `lookup` tool once and reports.
 */
import { z } from 'zod';
import { ToolRegistry } from '../../src/tools/registry';
import { fakeReply, type FakeRequest, type FakeResponder } from '../../src/testing';

export const PARENT_PROMPT = 'Research the cities Oslo, Lima and Pune';
export const CITIES = ['Oslo', 'Lima', 'Pune'];

/** The text of a request message (string content or text blocks). */
export function messageText(m: { content: unknown } | undefined): string {
  if (!m) return '';
  if (typeof m.content === 'string') return m.content;
  return (m.content as Array<{ type: string; text?: string; content?: unknown }>)
    .map((b) => (b.type === 'text' ? (b.text ?? '') : b.type === 'tool_result' ? JSON.stringify(b.content) : ''))
    .join(' ');
}

export function isChildRequest(r: FakeRequest): boolean {
  return messageText(r.body.messages?.[0]).startsWith('Look up ');
}

/** The application's tool the children call. */
export function lookupTools(calls: string[] = []): ToolRegistry {
  return new ToolRegistry().register({
    name: 'lookup',
    description: 'Look up facts about a city',
    input: z.object({ city: z.string() }),
    async run({ city }) {
      calls.push(city);
      return `${city}: population ${city.length * 100_000}`;
    },
  });
}

export interface ScriptOptions {
  /** Spawn input per city (default: a run-mode task). */
  readonly spawnInput?: (city: string) => Record<string, unknown>;
  readonly cities?: readonly string[];
  /** Children wait this long before their final reply (to be caught mid-run). */
  readonly childReplyDelayMs?: number | ((city: string) => number);
}

/** Answers parent and child requests from what they contain; anything else is "not mine". */
export function subagentResponder(opts: ScriptOptions = {}): FakeResponder {
  const cities = opts.cities ?? CITIES;
  return (r) => {
    const messages = r.body.messages ?? [];
    const last = messages[messages.length - 1];
    const lastText = messageText(last);
    if (isChildRequest(r)) {
      const city = /^Look up (\w+)/.exec(messageText(messages[0]))![1]!;
      if (messages.length === 1)
        return fakeReply.toolUse([{ id: `toolu_lookup_${city}`, name: 'lookup', input: { city } }]);
      if (lastText.includes('steer:'))
        return fakeReply.text(`${city} steered: ${lastText.slice(lastText.indexOf('steer:'))}`);
      const delayMs =
        typeof opts.childReplyDelayMs === 'function' ? opts.childReplyDelayMs(city) : opts.childReplyDelayMs;
      return { ...fakeReply.text(`${city} has population ${city.length * 100_000}.`), ...(delayMs ? { delayMs } : {}) };
    }
    // An announce, whatever came before it (right after a compaction it shares a user message with the summary).
    const announce = lastText.lastIndexOf('[Subagent');
    if (!isToolResultTurn(last) && announce >= 0)
      return fakeReply.text(`Noted ${/"(\w+)"/.exec(lastText.slice(announce))?.[1] ?? 'a result'}.`);
    if (messageText(messages[0]).startsWith(PARENT_PROMPT)) {
      if (messages.length === 1) {
        return fakeReply.toolUse(
          cities.map((city) => ({
            id: `toolu_spawn_${city}`,
            name: 'sessions_spawn',
            input: opts.spawnInput?.(city) ?? { task: `Look up ${city} and report its population.`, label: city },
          })),
        );
      }
      if (isToolResultTurn(last)) return fakeReply.text('Waiting for my subagents.');
      return fakeReply.text('ok');
    }
    return undefined;
  };
}

function isToolResultTurn(m: { role: string; content: any } | undefined): boolean {
  return (
    m?.role === 'user' && Array.isArray(m.content) && m.content.some((b: { type: string }) => b.type === 'tool_result')
  );
}
