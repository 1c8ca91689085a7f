import type { z } from 'zod';
import type { ImageBlock, TextBlock } from '../context/types';
import type { ModelTool } from '../model/model-client';
import { toolInputJsonSchema } from './tool-json-schema';

/** What a tool gets besides its input. */
export interface ToolContext {
  readonly agentId: string;
  readonly sessionKey: string;
  /**
   * Stable across every retry of this one call (workflow id + assistant entry + tool call id), so a
   * tool with side effects can deduplicate.
   */
  readonly idempotencyKey: string;
  /** Aborted when the activity is cancelled or times out. */
  readonly signal: AbortSignal;
  /** The agent's workspace folder and what the agent may do with it; absent when it has none (or access `none`). */
  readonly workspace?: { readonly dir: string; readonly access: 'rw' | 'ro' };
}

export interface ToolOutput {
  readonly content: Array<TextBlock | ImageBlock>;
  readonly isError?: boolean;
  /** Tool-private data: persisted, never sent to a model. */
  readonly details?: unknown;
}

/** A tool the embedding application registers; it runs as a Temporal activity. */
export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly description: string;
  /** zod schema of the input; the model sees its JSON Schema. */
  readonly input: S;
  run(input: z.infer<S>, ctx: ToolContext): Promise<string | ToolOutput>;
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
    this.schemas.set(tool.name, toolInputJsonSchema(tool.name, tool.input));
    this.tools.set(tool.name, tool as unknown as ToolDefinition);
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
    this.modelToolList ??= this.list().map((t) => ({ name: t.name, description: t.description, inputSchema: this.schemas.get(t.name)! }));
    return this.modelToolList;
  }
}
