/**
 * A retrieval context engine: it keeps every message of a session it was handed (bootstrap, then
 * ingest), and when the model's context no longer holds one (a compaction summarized it), it recalls
 * the stored messages that best match the latest user message into the system prompt.
 *
 * What it keeps per session lives from `bootstrap` to `dispose`, as Keel's engine contract allows;
 * a worker that meets the session later bootstraps it again from the session's active window.
 */
import {
  LegacyContextEngine,
  type AgentMessage,
  type AssembleParams,
  type AssembleResult,
  type CompactParams,
  type CompactResult,
  type ContextEngine,
  type ContextEngineOptions,
  type IngestParams,
  type SessionRef,
} from 'keel-agents';

/** One stored message, as the engine indexes it. */
interface Indexed {
  readonly text: string;
  readonly terms: ReadonlySet<string>;
}

/** The heading of the recalled block in the system prompt. */
export const RECALLED_HEADING = 'Recalled from earlier in this session:';

/** Keel's `legacy` assembly plus recall of what the context no longer holds. */
export class RetrievalContextEngine implements ContextEngine {
  readonly id = 'retrieval';
  private readonly legacy = new LegacyContextEngine();
  private readonly sessions = new Map<string, Indexed[]>();
  private readonly maxRecalled: number;

  /** `contextEngineOptions.maxRecalled`: messages recalled into the system prompt at most (default 3). */
  constructor(options: ContextEngineOptions = {}) {
    const max = options.maxRecalled ?? 3;
    if (typeof max !== 'number' || !Number.isInteger(max) || max < 1)
      throw new Error(`contextEngineOptions.maxRecalled is ${JSON.stringify(max)}; use a whole number from 1`);
    this.maxRecalled = max;
  }

  async bootstrap({ sessionId, messages }: SessionRef & { messages: readonly AgentMessage[] }): Promise<void> {
    this.sessions.set(sessionId, messages.flatMap(indexed));
  }

  async ingest({ sessionId, message }: IngestParams): Promise<void> {
    this.stored(sessionId).push(...indexed(message));
  }

  async ingestBatch({ sessionId, messages }: SessionRef & { messages: readonly AgentMessage[] }): Promise<void> {
    this.stored(sessionId).push(...messages.flatMap(indexed));
  }

  async assemble(params: AssembleParams): Promise<AssembleResult> {
    const assembled = await this.legacy.assemble(params);
    const recalled = this.recall(params.sessionId, params.messages);
    if (recalled.length === 0) return assembled;
    return {
      ...assembled,
      systemPromptAddition: [RECALLED_HEADING, ...recalled.map((text) => `- ${text}`)].join('\n'),
    };
  }

  /** Compaction stays Keel's; the engine still holds what it summarizes. */
  async compact(_params: CompactParams): Promise<CompactResult> {
    return { delegated: true };
  }

  async dispose({ sessionId }: SessionRef): Promise<void> {
    this.sessions.delete(sessionId);
  }

  /** Stored texts absent from the context, best match with the latest user message first. */
  private recall(sessionId: string, inContext: readonly AgentMessage[]): string[] {
    const latest = [...inContext].reverse().find((m) => m.role === 'user');
    const query = latest ? termsOf(textOf(latest)) : new Set<string>();
    const seen = new Set(inContext.map(textOf));
    return (this.sessions.get(sessionId) ?? [])
      .filter((m) => !seen.has(m.text))
      .map((m) => ({ text: m.text, score: [...query].filter((t) => m.terms.has(t)).length }))
      .filter((m) => m.score > 0)
      .sort((a, b) => b.score - a.score)
      .slice(0, this.maxRecalled)
      .map((m) => m.text);
  }

  private stored(sessionId: string): Indexed[] {
    let stored = this.sessions.get(sessionId);
    if (!stored) this.sessions.set(sessionId, (stored = []));
    return stored;
  }
}

function indexed(message: AgentMessage): Indexed[] {
  const text = textOf(message);
  return message.role === 'user' && text ? [{ text, terms: termsOf(text) }] : [];
}

function textOf(message: AgentMessage): string {
  if (typeof message.content === 'string') return message.content;
  return message.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
}

/** Lower-case words of four letters or more: enough to match a question with what was said. */
function termsOf(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/[a-z0-9]{4,}/g) ?? []);
}
