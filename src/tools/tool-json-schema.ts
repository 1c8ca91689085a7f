import { z } from 'zod';

/**
 * The JSON Schema a model sees for a tool's zod input, computed once when the tool is registered.
 * Providers take an object schema only (Anthropic: `input_schema.type` must be "object"), so any
 * other input is refused here, naming the tool, rather than by the provider on every call.
 */
export function toolInputJsonSchema(toolName: string, input: z.ZodType): Record<string, unknown> {
  let schema: Record<string, unknown>;
  try {
    // `input`: what the model must send (fields with defaults are optional), not what run() receives.
    schema = z.toJSONSchema(input, { io: 'input' }) as Record<string, unknown>;
  } catch (err) {
    throw new Error(
      `tool "${toolName}": its input cannot be described as JSON Schema (${(err as Error).message}); use types the model can send as JSON (no z.date(), z.bigint(), z.map() or custom checks)`,
      { cause: err },
    );
  }
  if (schema.type !== 'object') {
    throw new Error(
      `tool "${toolName}": input must be a z.object(...) (the model sends a tool's input as a JSON object), got JSON Schema type ${JSON.stringify(schema.type ?? null)}`,
    );
  }
  // The draft URI only costs tokens on every request.
  const { $schema: _draft, ...rest } = schema;
  return rest;
}
