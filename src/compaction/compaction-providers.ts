/**
 * Compaction providers (OpenClaw's compaction-provider plugins): an application registers one by id,
 * as it registers tools or context engines, and `compactionProvider` selects it per agent. The
 * provider writes each summary the compaction asks for; Keel's own summarizer answers whenever the
 * provider throws or returns no summary, and a cancellation is re-thrown, never answered.
 */
import type { TokenUsage } from '../protocol';

/** One summary Keel asks of a provider: the same text, rules and prompt its own summarizer gets. */
export interface CompactionProviderRequest {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  readonly compactionId: string;
  /** The conversation to summarize, serialized as for Keel's summarizer. */
  readonly text: string;
  /** The summary so far, to distil together with `text`. */
  readonly previousSummary?: string | undefined;
  /** Keel's rules for the summary: its sections, the identifiers to keep verbatim, the decisions and instructions to quote. */
  readonly instructions: string;
  /** The whole prompt Keel's summarizer would send (text, previous summary and rules), and its system prompt. */
  readonly prompt: string;
  readonly systemPrompt: string;
  /** Aborted when the compaction's activity is cancelled or times out: stop, and let the abort throw. */
  readonly signal: AbortSignal;
}

/** A provider's summary, and what it was billed (recorded on the compaction like Keel's summarizer calls). */
export interface CompactionProviderResult {
  readonly summary: string;
  readonly billing?: TokenUsage & { readonly model: string };
}

/** A plugin that writes compaction summaries. */
export interface CompactionProvider {
  readonly id: string;
  /** The summary; `undefined` or an empty summary hands the work to Keel's summarizer. */
  summarize(request: CompactionProviderRequest): Promise<CompactionProviderResult | undefined>;
}

const providers = new Map<string, CompactionProvider>();

/** Registers (or replaces) a provider under its id; returns a function that removes it again. */
export function registerCompactionProvider(provider: CompactionProvider): () => void {
  const previous = providers.get(provider.id);
  providers.set(provider.id, provider);
  return () => {
    if (previous) providers.set(provider.id, previous);
    else providers.delete(provider.id);
  };
}

/** The ids that can be selected. */
export function registeredCompactionProviders(): string[] {
  return [...providers.keys()];
}

/** The provider `id` names; undefined for no id. Throws naming the setting when nobody registered it. */
export function compactionProviderFor(id: string | undefined): CompactionProvider | undefined {
  if (!id) return undefined;
  const provider = providers.get(id);
  if (!provider) throw new Error(unknownProviderMessage(id));
  return provider;
}

/** What `summaryFromProvider` does around the provider: Keel's summarizer, the billing record, the log. */
export interface ProviderFallback {
  builtin(): Promise<string>;
  bill(billing: NonNullable<CompactionProviderResult['billing']>): Promise<void>;
  warn(message: string): void;
}

/**
 * The provider's summary, billed; Keel's summarizer's when the provider throws or returns an empty
 * summary (said in one warning); the provider's error itself when the request was aborted.
 */
export async function summaryFromProvider(
  provider: CompactionProvider,
  request: CompactionProviderRequest,
  around: ProviderFallback,
): Promise<string> {
  try {
    const result = await provider.summarize(request);
    if (result?.billing) await around.bill(result.billing);
    if (result?.summary.trim()) return result.summary;
    around.warn(`compaction provider ${provider.id} returned no summary; Keel's summarizer writes it`);
  } catch (err) {
    if (request.signal.aborted) throw err;
    around.warn(
      `compaction provider ${provider.id} failed: ${err instanceof Error ? err.message : String(err)}; Keel's summarizer writes the summary`,
    );
  }
  return around.builtin();
}

/** The refusal of an unregistered id (the config names the setting before it). */
export function unknownProviderMessage(id: string): string {
  const known = registeredCompactionProviders();
  return `"${id}" is not a registered compaction provider; ${known.length ? `use one of ${known.join(', ')}, or ` : ''}register it with registerCompactionProvider before the config is read`;
}
