import type { Context } from 'hono';
import type { z } from 'zod';
import { ApiProblem, invalidRequest } from './problem';

/** The path parameters, validated by `schema`; a bad one is a 400 (or 413) problem naming it. */
export function parsePath<S extends z.ZodType>(c: Context, schema: S): z.output<S> {
  const parsed = schema.safeParse(c.req.param());
  if (!parsed.success) throw invalidRequest(parsed.error, 'path');
  return parsed.data;
}

/** The query string, validated by `schema` (an unknown parameter is refused, not ignored). */
export function parseQuery<S extends z.ZodType>(c: Context, schema: S): z.output<S> {
  const parsed = schema.safeParse(c.req.query());
  if (!parsed.success) throw invalidRequest(parsed.error, 'query');
  return parsed.data;
}

/** The request headers `schema` names (by lower-case name), validated; a bad one is a 400 problem naming it. */
export function parseHeaders<S extends z.ZodType>(c: Context, schema: S): z.output<S> {
  const parsed = schema.safeParse(c.req.header());
  if (!parsed.success) throw invalidRequest(parsed.error, 'header');
  return parsed.data;
}

/** The JSON body, validated by `schema`; an empty body is `{}` (every field of it may be optional). */
export async function parseBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.output<S>> {
  const text = await c.req.text();
  let json: unknown = {};
  if (text.trim() !== '') {
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw new ApiProblem(
        400,
        'invalid-request',
        `body: not valid JSON (${err instanceof Error ? err.message : String(err)}); send a JSON object`,
        'body',
      );
    }
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw invalidRequest(parsed.error, 'body');
  return parsed.data;
}
