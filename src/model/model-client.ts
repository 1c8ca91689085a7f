/**
 * The one interface Keel calls models through. Requests and responses use Keel's message shapes
 * (`src/context/types.ts`); each implementation converts to its provider's wire format inside itself.
 */
import type { AgentMessage, AssistantBlock, StopReason } from '../context/types';

/** A tool the model may call; `inputSchema` is a JSON Schema object. */
export interface ModelTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** One model call. */
export interface ModelRequest {
  model: string;
  system?: string;
  messages: AgentMessage[];
  tools?: readonly ModelTool[];
  maxTokens: number;
  temperature?: number;
  /**
   * Mark the stable prefix (tools, system prompt, conversation so far) for the provider's prompt
   * cache where the provider needs markers (Anthropic `cache_control`). Default off.
   */
  promptCaching?: boolean;
}

/** Progress events while a reply streams (heartbeats hang off these). */
export type ModelStreamEvent =
  | { type: 'messageStart' }
  | { type: 'text'; delta: string }
  | { type: 'thinking'; delta: string }
  | { type: 'toolCallStart'; id: string; name: string }
  | { type: 'toolCallInput'; partialJson: string }
  | { type: 'messageStop' };

/** Per-call options; all optional. */
export interface ModelCallOptions {
  /** Aborts the HTTP request (activity cancellation). */
  signal?: AbortSignal;
  /** Each text delta and all reply text so far (text blocks concatenated), in arrival order. */
  onText?: (delta: string, soFar: string) => void;
  /** Every progress event, for heartbeats. */
  onEvent?: (event: ModelStreamEvent) => void;
}

/** Token usage of one call as the provider reported it. */
export interface ModelUsage {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

/** A complete reply: only returned when the provider finished the message (never a cut-off partial). */
export interface ModelResponse {
  content: AssistantBlock[];
  stopReason: StopReason;
  usage: ModelUsage;
  model: string;
}

/**
 * Calls a model once. Implementations make exactly one HTTP request per call (retries belong to
 * Temporal) and throw the typed errors of `./errors` (`ModelRateLimitedError`, `ContextOverflowError`, …).
 */
export interface ModelClient {
  complete(request: ModelRequest, options?: ModelCallOptions): Promise<ModelResponse>;
}
