import { z } from 'zod';
import type { TranscriptEntry } from '../context/types';

/**
 * Shapes of imported JSONL lines (Pi / OpenClaw transcripts). Loose on purpose: unknown fields are
 * kept, unknown entry types (`model_change`, `label`, ...) are kept, so an import loses nothing the
 * load path might one day read. `id` and `timestamp` are optional here because the line repairer
 * fills them (deterministic id, previous timestamp) and reports it.
 */

const nonEmpty = z.string().min(1);
const blocks = z.array(z.looseObject({ type: z.string() }));

/** The first line of every transcript. */
export const sessionHeaderSchema = z.looseObject({
  type: z.literal('session'),
  id: nonEmpty,
  timestamp: z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'timestamp is not a date'),
  version: z.number().exactOptional(),
  cwd: z.string().exactOptional(),
  /** The session key, written by `keel export` into the header of a key's current transcript. */
  sessionKey: z.string().exactOptional(),
});
export type ImportedSessionHeader = z.infer<typeof sessionHeaderSchema>;

const roleSchemas: Record<string, z.ZodType> = {
  user: z.looseObject({ role: z.literal('user'), content: z.union([z.string(), blocks]) }),
  assistant: z.looseObject({ role: z.literal('assistant'), content: blocks }),
  toolResult: z.looseObject({
    role: z.literal('toolResult'),
    toolCallId: z.string(),
    toolName: z.string().optional(),
    content: z.union([z.string(), blocks]),
  }),
};

/** Known roles are checked; other roles (Pi's `bashExecution`, ...) are kept as they are. */
const messageSchema = z.looseObject({ role: nonEmpty }).superRefine((message, ctx) => {
  const schema = roleSchemas[message.role];
  if (!schema) return;
  const result = schema.safeParse(message);
  if (!result.success) {
    for (const issue of result.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
  }
});

const base = {
  id: z.string().optional(),
  parentId: z.string().nullable().optional(),
  timestamp: z.unknown().optional(),
};

const entrySchemas: Record<string, z.ZodType> = {
  message: z.looseObject({ ...base, type: z.literal('message'), message: messageSchema }),
  compaction: z.looseObject({
    ...base,
    type: z.literal('compaction'),
    summary: z.string(),
    firstKeptEntryId: z.string(),
    tokensBefore: z.number(),
  }),
  custom_message: z.looseObject({
    ...base,
    type: z.literal('custom_message'),
    customType: z.string(),
    content: z.union([z.string(), blocks]),
  }),
  custom: z.looseObject({ ...base, type: z.literal('custom'), customType: z.string() }),
  branch_summary: z.looseObject({
    ...base,
    type: z.literal('branch_summary'),
    fromId: z.string(),
    summary: z.string(),
  }),
};
const otherEntrySchema = z.looseObject({ ...base, type: nonEmpty });

/** An entry line after validation: a plain object with a `type`. */
export type ImportedEntry = Record<string, unknown> & { type: string };

/**
 * The transcript entry a validated line stands for, once the line repairer has given it its `id`
 * and `timestamp` (the only fields the schemas above leave optional). Kinds Keel does not know are
 * kept verbatim, as stored entries of those kinds are: readers look at `type` and skip them.
 */
export function repairedEntry(entry: ImportedEntry, id: string, timestamp: string): TranscriptEntry {
  entry.id = id;
  entry.timestamp = timestamp;
  return entry as TranscriptEntry;
}

/** Why a value is not a transcript entry, in one line naming the field. */
function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((i) => `${i.path.length > 0 ? i.path.join('.') : '(entry)'}: ${i.message}`)
    .join('; ');
}

/** Validates one parsed line as a non-header entry; the reason names the bad field. */
export function validateEntry(value: unknown): { ok: true; entry: ImportedEntry } | { ok: false; reason: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { ok: false, reason: 'not a JSON object' };
  const type = (value as { type?: unknown }).type;
  if (typeof type !== 'string' || type.length === 0) return { ok: false, reason: 'entry has no "type"' };
  const result = (entrySchemas[type] ?? otherEntrySchema).safeParse(value);
  if (!result.success) return { ok: false, reason: `invalid ${type} entry: ${describeIssues(result.error)}` };
  return { ok: true, entry: result.data as ImportedEntry };
}

/** Validates the first entry of a file as a session header. */
export function validateHeader(
  value: unknown,
): { ok: true; header: ImportedSessionHeader } | { ok: false; reason: string } {
  const result = sessionHeaderSchema.safeParse(value);
  if (!result.success) return { ok: false, reason: describeIssues(result.error) };
  return { ok: true, header: result.data };
}
