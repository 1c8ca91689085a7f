import type { z } from 'zod';
import type { ImageBlock, TextBlock } from '../context/types';
import type { ModelTool } from '../model/model-client';
import { toolInputJsonSchema } from './tool-json-schema';
import { DEFAULTS } from '../config/defaults';

/** What a tool gets besides its input. */
export interface ToolContext {
  readonly agentId: string;
  readonly sessionKey: string;
  /**
   * Stable across every run of this one call (workflow id + assistant entry + tool call id), so a
   * tool with side effects can deduplicate.
   */
  readonly idempotencyKey: string;
  /** Aborted at this run's timeout (its result is then the timeout error) or when the activity is cancelled. */
  readonly signal: AbortSignal;
  /** The agent's workspace folder and what the agent may do with it; absent when it has none (or access `none`). */
  readonly workspace?: { readonly dir: string; readonly access: 'rw' | 'ro' };
}

/** What a tool's approval policy gets besides the call's input. */
export interface ApprovalContext {
  readonly agentId: string;
  readonly sessionKey: string;
}

export interface ToolOutput {
  readonly content: Array<TextBlock | ImageBlock>;
  readonly isError?: boolean;
  /** Tool-private data: persisted, never sent to a model. */
  readonly details?: unknown;
}

/** How often a tool runs when it fails, and how long it waits between runs (doubling up to the maximum). */
export interface ToolRetryPolicy {
  /** Runs in all, the first included (at least 1). */
  readonly maxAttempts: number;
  readonly initialIntervalMs?: number;
  readonly maxIntervalMs?: number;
}

/**
 * A tool the embedding application registers; it runs in a Temporal activity. A thrown error becomes
 * an error result the model reads (with the tool's name and the error's message), and the turn goes on.
 */
export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly description: string;
  /** zod schema of the input; the model sees its JSON Schema. */
  readonly input: S;
  /**
   * How long one run may take; past it `ctx.signal` is aborted and the model gets a timeout error
   * result. Default: the agent's `toolTimeout`; the agent's `toolTimeouts.<name>` overrides this.
   */
  readonly timeoutMs?: number;
  /**
   * Set: every error the tool throws is retried under this policy (the tool is safe to run again
   * with its idempotency key); return `{ isError: true }` to answer without a retry. Unset: only a
   * `RetryableToolError` is retried, under the default policy.
   */
  readonly retry?: ToolRetryPolicy;
  /**
   * A call waits for a person's approval before it runs: `'always'`, or when the function returns
   * true for the call's input (evaluated on the worker, right after the model asked for the call).
   * The agent's `approvals.tools` can ask for it too. A denied call never runs; the model reads why.
   */
  readonly approval?: 'always' | ((input: z.infer<S>, ctx: ApprovalContext) => boolean);
  run(input: z.infer<S>, ctx: ToolContext): Promise<string | ToolOutput>;
}

/**
 * A tool of any input schema, as a registry or a list of tools holds it. The one cast of tool
 * definitions: `approval` takes the tool's own input, which TypeScript cannot widen to every input.
 */
export function erasedTool<S extends z.ZodType>(tool: ToolDefinition<S>): ToolDefinition {
  return tool as unknown as ToolDefinition;
}

/** Tools by name. Names follow the provider rule `[A-Za-z0-9_-]{1,64}`. */
export class ToolRegistry {
  private readonly tools = new Map<string, ToolDefinition>();
  private readonly schemas = new Map<string, Record<string, unknown>>();
  /** What every model request carries, built once (tools are registered before the worker starts). */
  private modelToolList: ModelTool[] | undefined;

  register<S extends z.ZodType>(tool: ToolDefinition<S>): this {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(tool.name)) {
      throw new Error(`tool name "${tool.name}" is invalid: use 1-64 characters of A-Z a-z 0-9 _ -`);
    }
    if (this.tools.has(tool.name)) throw new Error(`tool "${tool.name}" is already registered`);
    checkRunLimits(tool);
    this.schemas.set(tool.name, toolInputJsonSchema(tool.name, tool.input));
    this.tools.set(tool.name, erasedTool(tool));
    this.modelToolList = undefined;
    return this;
  }

  get(name: string): ToolDefinition | undefined {
    return this.tools.get(name);
  }

  list(): ToolDefinition[] {
    return [...this.tools.values()];
  }

  /** The tools as a model request lists them: name, description and the JSON Schema of the input. */
  modelTools(): readonly ModelTool[] {
    this.modelToolList ??= this.list().map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: this.schemas.get(t.name)!,
    }));
    return this.modelToolList;
  }
}

/** A timeout or retry policy that could never work fails at registration, naming the field. */
function checkRunLimits(tool: ToolDefinition<z.ZodType>): void {
  const positive = (value: number | undefined, field: string, min: number, max = Number.MAX_SAFE_INTEGER) => {
    if (value !== undefined && !(Number.isInteger(value) && value >= min && value <= max)) {
      throw new Error(`tool "${tool.name}": ${field} is ${value}; use a whole number from ${min} to ${max}`);
    }
  };
  positive(tool.timeoutMs, 'timeoutMs', 1, DEFAULTS.toolTimeoutMaxMs);
  if (!tool.retry) return;
  positive(tool.retry.maxAttempts ?? Number.NaN, 'retry.maxAttempts', 1);
  positive(tool.retry.initialIntervalMs, 'retry.initialIntervalMs', 0);
  positive(tool.retry.maxIntervalMs, 'retry.maxIntervalMs', 0);
}
