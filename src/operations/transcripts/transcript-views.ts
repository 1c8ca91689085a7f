/** The views of the transcript operations the console reads: a page of entries. */
import { z } from 'zod';
import 'zod-openapi';
import { count } from '../view-fields';

/** One entry as the console shows it: its text, tool calls folded, a tool result's tool. */
const consoleEntry = z
  .strictObject({
    id: z.string(),
    seq: z.number().int(),
    type: z.string(),
    role: z.string().nullable(),
    createdAt: z.iso.datetime(),
    tokens: count.nullable(),
    text: z.string(),
    toolCalls: z.array(
      z.strictObject({ name: z.string(), arguments: z.string().meta({ description: 'The call’s arguments as JSON' }) }),
    ),
    toolName: z.string().optional(),
  })
  .meta({ id: 'ConsoleEntry' });

/** One entry as the console shows it. */
export type ConsoleEntry = z.infer<typeof consoleEntry>;

/** `GET /v1/sessions/{sessionKey}/transcript`: a page of the transcript. */
export const transcriptPage = z
  .strictObject({ entries: z.array(consoleEntry), total: count, page: count, pageSize: count })
  .meta({ id: 'TranscriptPage' });

/** A page of entries and how many the transcript holds. */
export type TranscriptPage = z.infer<typeof transcriptPage>;
