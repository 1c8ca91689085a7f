/**
 * The HTTP API's requests as zod schemas: the routes validate with them and /openapi.json is
 * generated from them, so the document cannot drift from what the server accepts.
 */
import { z } from 'zod';
import 'zod-openapi';
import { MAX_USER_TEXT_CHARS } from '../protocol';
import { thinkingLevelSchema } from '../config/setting-schemas';

/** A session key in the path, URL-encoded (`agent%3Amain%3Amain`); its grammar is checked by the client. */
export const sessionKeyParams = z.object({
  sessionKey: z
    .string()
    .min(1)
    .meta({ description: 'The session key, URL-encoded, e.g. `agent%3Amain%3Amain`', examples: ['agent:main:main'] }),
});

/** `POST /v1/sessions/{sessionKey}/messages`. */
export const messageBody = z
  .strictObject({
    text: z
      .string()
      .trim()
      .min(1, 'text: must be a non-empty string')
      .max(
        MAX_USER_TEXT_CHARS,
        `text: longer than ${MAX_USER_TEXT_CHARS} characters; send large content as a file or a tool result`,
      ),
    requestId: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .meta({ description: 'Idempotency: a resent request with the same id runs once and answers the same reply' }),
    budget: z
      .strictObject({
        maxModelCalls: z
          .number()
          .int()
          .min(2, 'budget.maxModelCalls: at least 2 (the last is the report), or null')
          .nullable()
          .optional(),
        maxTokens: z.number().int().positive('budget.maxTokens: tokens > 0, or null').nullable().optional(),
      })
      .refine((b) => b.maxModelCalls !== null || b.maxTokens !== null, {
        message: 'budget: a run needs a limit; set maxTokens to turn maxModelCalls off',
      })
      .optional()
      .meta({
        id: 'RunBudget',
        description:
          'This turn’s run budget over the agent’s: model calls and tokens (null: no limit). At its budget the turn makes a last call without tools to report, and the reply carries stopReason',
      }),
    thinking: thinkingLevelSchema.optional().meta({
      description: 'This turn’s thinking level, over the session’s and its agent’s (`thinkingLevel`)',
    }),
  })
  .meta({ id: 'MessageRequest' });

/** `POST /v1/sessions/{sessionKey}/compact`. */
export const compactBody = z
  .strictObject({
    instructions: z
      .string()
      .max(MAX_USER_TEXT_CHARS, `instructions: longer than ${MAX_USER_TEXT_CHARS} characters`)
      .optional()
      .meta({ description: 'What the summary should focus on' }),
    keepRecentTokens: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .meta({ description: 'Recent tokens kept verbatim; unset: a hard checkpoint' }),
  })
  .meta({ id: 'CompactRequest' });

/** `POST /v1/sessions/{sessionKey}/thinking`. */
export const thinkingBody = z
  .strictObject({
    level: thinkingLevelSchema.nullable().meta({
      description: 'The session’s thinking level from its next turn on; null: its agent’s (`thinkingLevel`) again',
    }),
  })
  .meta({ id: 'ThinkingRequest' });

/** `GET /v1/sessions`. */
export const sessionsQuery = z.strictObject({
  agent: z.string().min(1).optional().meta({ description: 'Only this agent’s sessions' }),
  active: z.coerce
    .number()
    .int()
    .nonnegative()
    .optional()
    .meta({ description: 'Only sessions updated within this many minutes' }),
});

/** `GET /v1/compactions`. */
export const compactionsQuery = z.strictObject({
  failed: z.enum(['true', 'false']).optional().meta({
    description: '`true`: only failed or degraded compactions, with the sessions whose auto-compaction is paused',
  }),
  agent: z.string().min(1).optional().meta({ description: 'Only this agent’s compactions' }),
});

/** `POST /v1/compactions/{id}/retry`. */
export const retryParams = z.object({
  id: z.string().min(1).meta({ description: 'A compaction id from `GET /v1/compactions`' }),
});

/** The agent a compaction id belongs to (ids are looked up per agent, as `keel compactions retry --agent`). */
export const retryQuery = z.strictObject({
  agent: z.string().min(1).default('main').meta({ description: 'The agent the compaction belongs to' }),
});

const pageNumber = z.coerce.number().int().min(1).default(1).meta({ description: 'The page, from 1' });
const pageSize = z.coerce
  .number()
  .int()
  .min(1)
  .max(200)
  .default(50)
  .meta({ description: 'Rows per page (at most 200)' });

/** `GET /v1/console/sessions`: one page of the fleet. */
export const fleetQuery = z.strictObject({
  page: pageNumber,
  pageSize,
  sort: z
    .enum(['updated', 'context', 'compactions', 'key'])
    .default('updated')
    .meta({ description: 'Newest first, fullest context first, most compactions first, or by key' }),
  q: z.string().max(200).optional().meta({ description: 'Only keys containing this text (case-insensitive)' }),
  agent: z.string().min(1).optional().meta({ description: 'Only this agent’s sessions' }),
});

/** `GET /v1/sessions/{sessionKey}/transcript`: one page of entries, oldest first. */
export const transcriptQuery = z.strictObject({ page: pageNumber, pageSize });

/** `POST /v1/compactions/{id}/rerun`: `keel compactions rerun`'s options. */
export const rerunBody = z
  .strictObject({
    instructions: z
      .string()
      .max(MAX_USER_TEXT_CHARS, `instructions: longer than ${MAX_USER_TEXT_CHARS} characters`)
      .optional()
      .meta({ description: 'Extra focus for the summarizer' }),
    model: z.string().min(1).optional().meta({ description: 'Another model of the agent’s summarizer endpoint' }),
    apply: z.boolean().optional().meta({
      description:
        'Make the new summary the session’s (only while that compaction’s range is the session’s window); revertible',
    }),
  })
  .meta({ id: 'RerunRequest' });

/** `POST /v1/subagents/{id}/kill` and `…/steer`. */
export const subagentParams = z.object({
  id: z.string().min(1).meta({ description: 'A subagent run id from `GET /v1/sessions/{sessionKey}/subagents`' }),
});

/** `POST /v1/subagents/{id}/steer`. */
export const steerBody = z
  .strictObject({
    text: z
      .string()
      .trim()
      .min(1, 'text: must be a non-empty string')
      .max(MAX_USER_TEXT_CHARS, `text: longer than ${MAX_USER_TEXT_CHARS} characters`),
  })
  .meta({ id: 'SteerRequest' });

/** `POST /v1/sessions/{sessionKey}/replay`: the policy to compare with the agent's configuration. */
export const replayBody = z
  .strictObject({
    policy: z.record(z.string(), z.unknown()).default({}).meta({
      description:
        'A replay policy, as `keel replay --policy FILE` reads it (e.g. `{ "contextWindowTokens": 100000 }`)',
    }),
  })
  .meta({ id: 'ReplayRequest' });

/** The agent a subagent run belongs to (run ids are looked up per agent, as `keel subagents kill --agent`). */
export const subagentQuery = z.strictObject({
  agent: z.string().min(1).default('main').meta({ description: 'The agent whose session spawned the run' }),
});

/** A position in a session's event stream: the `seq` of the last event seen (each event's SSE `id`). */
const eventPosition = z.coerce.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

/** `GET /v1/sessions/{sessionKey}/events`. */
export const eventsQuery = z.strictObject({
  after: eventPosition.optional().meta({
    description:
      'Resume after this event id (`0`: from the session’s start); unset: from now. The `Last-Event-ID` header wins over it',
  }),
  progress: z.enum(['true', 'false'], { message: 'progress: use true or false' }).optional().meta({
    description:
      '`true`: also a `progress` event (no id) whenever the running turn’s model calls, tokens or compactions move',
  }),
});

/** `GET /v1/sessions/{sessionKey}/events`: the header a reconnecting EventSource sends. */
export const eventsHeaders = z.object({
  'last-event-id': eventPosition
    .optional()
    .meta({ description: 'The id of the last event received: the stream resumes after it, missing nothing' }),
});
/** `POST /v1/approvals/{id}`. */
export const approvalParams = z.object({
  id: z.string().min(1).meta({ description: 'An approval id from `GET /v1/approvals`' }),
});

/** `GET /v1/approvals`. */
export const approvalsQuery = z.strictObject({
  agent: z.string().min(1).optional().meta({ description: "Only this agent's pending calls" }),
});

/** `POST /v1/approvals/{id}`: a decision on a waiting tool call. */
export const approvalBody = z
  .strictObject({
    decision: z.enum(['approve', 'deny'], { message: 'decision: use "approve" or "deny"' }),
    note: z
      .string()
      .max(2_000, 'note: at most 2000 characters')
      .optional()
      .meta({ description: 'Said with an approval' }),
    reason: z
      .string()
      .max(2_000, 'reason: at most 2000 characters')
      .optional()
      .meta({ description: 'Why the call is denied; told to the model' }),
    by: z
      .string()
      .min(1)
      .max(200, 'by: at most 200 characters')
      .optional()
      .meta({ description: 'Who decides; stored and told to the model (default "api")' }),
  })
  .meta({ id: 'ApprovalDecision' });
