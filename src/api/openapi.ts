import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiResponsesObject } from 'zod-openapi';
import type { z } from 'zod';
import {
  approvalBody,
  approvalParams,
  approvalsQuery,
  compactBody,
  thinkingBody,
  compactionsQuery,
  eventsHeaders,
  eventsQuery,
  fleetQuery,
  messageBody,
  replayBody,
  rerunBody,
  steerBody,
  subagentParams,
  subagentQuery,
  retryParams,
  retryQuery,
  sessionKeyParams,
  sessionsQuery,
  transcriptQuery,
} from './request-schemas';
import {
  announceEvent,
  reportEvent,
  systemEvent,
  progressEvent,
  compactionResult,
  sessionThinking,
  messageReply,
  problem,
  restartEvent,
  textEvent,
  toolEvent,
} from './response-schemas';
import {
  contextSeries,
  sessionStatusReport as sessionStatus,
  sessionsList,
} from '../operations/sessions/session-views';
import { fleetOverview, fleetPage } from '../operations/fleet/fleet-views';
import { transcriptPage } from '../operations/transcripts/transcript-views';
import {
  compactionEdit,
  compactionsList,
  retryResult,
  sessionCompactions,
} from '../operations/compactions/compaction-views';
import { killResult, steerResult, subagentsList } from '../operations/subagents/subagent-views';
import { approvalOutcome, approvalsList } from '../operations/approvals/approval-views';

const problemContent = { 'application/problem+json': { schema: problem } };

/** The error answers a route can give, each a problem document. */
function problems(...statuses: number[]): ZodOpenApiResponsesObject {
  const reasons: Record<number, string> = {
    400: 'A bad session key, body or parameter (`field` names it)',
    401: 'No bearer token, or a wrong one',
    403: 'The agent is not in KEEL_ALLOWED_AGENTS',
    404: 'No such session, compaction or pending approval',
    409: 'The compaction cannot be edited now (one runs for the session, or it is not in the session’s transcript)',
    413: 'The body or a text is over its size limit',
    502: 'The request failed in the session (`failureType` says how)',
    503: 'Temporal or the database does not answer',
  };
  return Object.fromEntries(
    [401, 503, ...statuses].map((s) => [String(s), { description: reasons[s]!, content: problemContent }]),
  );
}

const json = (schema: z.ZodType, description: string) => ({ description, content: { 'application/json': { schema } } });

/**
 * The SSE events of a stream, by name: OpenAPI 3.1 has no schema for an event stream, so the
 * document lists each event's data schema under `x-sse-events` (the HTTP tests validate with it).
 */
const sse = (description: string, events: Record<string, string>) => ({
  description,
  content: { 'text/event-stream': { schema: { type: 'string' as const } } },
  'x-sse-events': Object.fromEntries(
    Object.entries(events).map(([event, id]) => [event, { $ref: `#/components/schemas/${id}` }]),
  ),
});

const messages: ZodOpenApiOperationObject = {
  operationId: 'sendMessage',
  summary: 'Run one durable turn and answer with the reply',
  description:
    'With `Accept: text/event-stream` the reply streams: `text` events while the model writes, `tool` when a tool call has run, `restart` when a model call is retried, then one `reply` (or one `error` with a problem). A client that disconnects does not cancel the turn.',
  requestParams: { path: sessionKeyParams },
  requestBody: { content: { 'application/json': { schema: messageBody } } },
  responses: {
    '200': {
      ...json(messageReply, 'The reply, once the turn is over; or its stream'),
      content: { 'application/json': { schema: messageReply }, 'text/event-stream': { schema: { type: 'string' } } },
      'x-sse-events': {
        text: { $ref: '#/components/schemas/TextEvent' },
        restart: { $ref: '#/components/schemas/RestartEvent' },
        tool: { $ref: '#/components/schemas/ToolEvent' },
        reply: { $ref: '#/components/schemas/MessageReply' },
        error: { $ref: '#/components/schemas/Problem' },
      },
    },
    ...problems(400, 403, 413, 502),
  },
};

/** The OpenAPI 3.1 document of the HTTP API, generated from the schemas the routes validate with. */
export function openApiDocument(): ReturnType<typeof createDocument> {
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Keel HTTP API',
      version: '1',
      description:
        'Send messages to durable agent sessions, stream replies, read status, compact. Every route needs `Authorization: Bearer $KEEL_API_TOKEN` when the server has a token.',
    },
    security: [{ bearer: [] }],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: {
        TextEvent: textEvent,
        RestartEvent: restartEvent,
        ToolEvent: toolEvent,
        ReportEvent: reportEvent,
        AnnounceEvent: announceEvent,
        SystemEvent: systemEvent,
        RunningTurn: progressEvent,
        MessageReply: messageReply,
        Problem: problem,
      },
    },
    paths: {
      '/v1/sessions': {
        get: {
          operationId: 'listSessions',
          summary: 'Every session, newest first (`keel sessions --json`)',
          requestParams: { query: sessionsQuery },
          responses: { '200': json(sessionsList, 'The sessions'), ...problems(400, 403) },
        },
      },
      '/v1/sessions/{sessionKey}': {
        get: {
          operationId: 'getSessionStatus',
          summary: 'A session’s status (`keel status --json`)',
          requestParams: { path: sessionKeyParams },
          responses: { '200': json(sessionStatus, 'The status'), ...problems(400, 403, 404) },
        },
      },
      '/v1/sessions/{sessionKey}/messages': { post: messages },
      '/v1/sessions/{sessionKey}/compact': {
        post: {
          operationId: 'compactSession',
          summary: 'Compact a session now and answer with the result',
          requestParams: { path: sessionKeyParams },
          requestBody: { content: { 'application/json': { schema: compactBody } } },
          responses: { '200': json(compactionResult, 'The compaction’s result'), ...problems(400, 403, 404, 413, 502) },
        },
      },
      '/v1/sessions/{sessionKey}/thinking': {
        get: {
          operationId: 'getSessionThinking',
          summary: 'The thinking level the session’s turns use, and whether it is the session’s or its agent’s',
          requestParams: { path: sessionKeyParams },
          responses: { '200': json(sessionThinking, 'The level in force'), ...problems(400, 403, 404) },
        },
        post: {
          operationId: 'setSessionThinking',
          summary: 'Set (or with null clear) the session’s thinking level',
          requestParams: { path: sessionKeyParams },
          requestBody: { content: { 'application/json': { schema: thinkingBody } } },
          responses: { '200': json(sessionThinking, 'The level in force'), ...problems(400, 403, 404) },
        },
      },
      '/v1/sessions/{sessionKey}/events': {
        get: {
          operationId: 'sessionEvents',
          summary:
            'What the session says without being asked, as server-sent events read from its transcript (`report`: a subagent’s report reached it; `announce`: its answer; `system`: its answer to a cron job, heartbeat or hook)',
          description:
            'Each event’s `id` is its transcript position: reconnect with `Last-Event-ID` (or `?after=`) to get exactly what was missed. The stream starts with an `id` line of where it stands. Every stream sees every event; none takes one from another stream or from a chat.',
          requestParams: { path: sessionKeyParams, query: eventsQuery, header: eventsHeaders },
          responses: {
            '200': sse('The event stream; it runs until the client leaves', {
              report: 'ReportEvent',
              announce: 'AnnounceEvent',
              system: 'SystemEvent',
              progress: 'RunningTurn',
            }),
            ...problems(400, 403, 404),
          },
        },
      },
      '/v1/compactions': {
        get: {
          operationId: 'listCompactions',
          summary: 'Compaction records, newest first (`keel compactions --json`)',
          requestParams: { query: compactionsQuery },
          responses: { '200': json(compactionsList, 'The compactions'), ...problems(400, 403) },
        },
      },
      '/v1/compactions/{id}/retry': {
        post: {
          operationId: 'retryCompaction',
          summary: 'Start a fresh compaction of that compaction’s session (joins a running one)',
          requestParams: { path: retryParams, query: retryQuery },
          responses: { '200': json(retryResult, 'The compaction started or joined'), ...problems(400, 403, 404) },
        },
      },
      '/v1/console/sessions': {
        get: {
          operationId: 'fleetPage',
          summary: 'One page of the fleet, filtered and sorted on the server (the console’s fleet view)',
          requestParams: { query: fleetQuery },
          responses: { '200': json(fleetPage, 'The page and the number of matching sessions'), ...problems(400, 403) },
        },
      },
      '/v1/compactions/{id}/revert': {
        post: {
          operationId: 'revertCompaction',
          summary:
            'Move the session’s window back to before that compaction (`keel compactions revert`); answers when done',
          requestParams: { path: retryParams, query: retryQuery },
          responses: {
            '200': json(compactionEdit, 'The revert’s own compaction record'),
            ...problems(400, 403, 404, 409),
          },
        },
      },
      '/v1/compactions/{id}/rerun': {
        post: {
          operationId: 'rerunCompaction',
          summary:
            'Summarize that compaction’s range again as a new record (`keel compactions rerun`); answers when done',
          requestParams: { path: retryParams, query: retryQuery },
          requestBody: { content: { 'application/json': { schema: rerunBody } } },
          responses: { '200': json(compactionEdit, 'The rerun’s compaction record'), ...problems(400, 403, 404, 409) },
        },
      },
      '/v1/sessions/{sessionKey}/subagents': {
        get: {
          operationId: 'listSubagents',
          summary: 'The subagent runs of the session’s agent (`keel subagents --json`), for the tree under the session',
          requestParams: { path: sessionKeyParams },
          responses: { '200': json(subagentsList, 'The runs'), ...problems(400, 403) },
        },
      },
      '/v1/subagents/{id}/kill': {
        post: {
          operationId: 'killSubagent',
          summary: 'Stop a subagent run (`keel subagents kill`)',
          requestParams: { path: subagentParams, query: subagentQuery },
          responses: { '200': json(killResult, 'Whether it was stopped'), ...problems(400, 403, 404) },
        },
      },
      '/v1/subagents/{id}/steer': {
        post: {
          operationId: 'steerSubagent',
          summary: 'Send a subagent a message; its answer reaches its parent (`keel subagents steer`)',
          requestParams: { path: subagentParams, query: subagentQuery },
          requestBody: { content: { 'application/json': { schema: steerBody } } },
          responses: { '200': json(steerResult, 'Whether it was admitted'), ...problems(400, 403, 404, 413) },
        },
      },
      '/v1/approvals': {
        get: {
          operationId: 'listApprovals',
          summary: 'Tool calls waiting for approval, across sessions, oldest first (`keel approvals --json`)',
          requestParams: { query: approvalsQuery },
          responses: { '200': json(approvalsList, 'The pending calls'), ...problems(400, 403) },
        },
      },
      '/v1/approvals/{id}': {
        post: {
          operationId: 'decideApproval',
          summary:
            'Approve or deny a waiting tool call (`keel approve` / `keel deny`); a call decided before returns its first outcome',
          requestParams: { path: approvalParams },
          requestBody: { content: { 'application/json': { schema: approvalBody } } },
          responses: { '200': json(approvalOutcome, 'How the call was decided'), ...problems(400, 403, 404, 413) },
        },
      },
      '/v1/sessions/{sessionKey}/replay': {
        post: {
          operationId: 'replaySession',
          summary:
            'The what-if replay report of the session: its agent’s configuration against the policy sent (`keel replay --html`), extractive summaries',
          requestParams: { path: sessionKeyParams },
          requestBody: { content: { 'application/json': { schema: replayBody } } },
          responses: {
            '200': {
              description: 'The report, a self-contained HTML page',
              content: { 'text/html': { schema: { type: 'string' } } },
            },
            ...problems(400, 403, 404),
          },
        },
      },
      '/v1/console/overview': {
        get: {
          operationId: 'fleetOverview',
          summary: 'The fleet’s charts: sessions by context pressure, compactions per hour with failures',
          responses: { '200': json(fleetOverview, 'The charts’ numbers'), ...problems() },
        },
      },
      '/v1/sessions/{sessionKey}/context-series': {
        get: {
          operationId: 'contextSeries',
          summary: 'Context tokens per model reply and the compactions, for a session’s chart',
          requestParams: { path: sessionKeyParams },
          responses: { '200': json(contextSeries, 'The series'), ...problems(400, 403, 404) },
        },
      },
      '/v1/sessions/{sessionKey}/transcript': {
        get: {
          operationId: 'transcriptPage',
          summary: 'One page of a session’s transcript, oldest first, tool calls by name',
          requestParams: { path: sessionKeyParams, query: transcriptQuery },
          responses: { '200': json(transcriptPage, 'The page and the number of entries'), ...problems(400, 403, 404) },
        },
      },
      '/v1/sessions/{sessionKey}/compactions': {
        get: {
          operationId: 'sessionCompactions',
          summary: 'A session’s compactions, newest first, each with its summary',
          requestParams: { path: sessionKeyParams },
          responses: { '200': json(sessionCompactions, 'The compactions'), ...problems(400, 403, 404) },
        },
      },
      '/openapi.json': {
        get: {
          operationId: 'openApi',
          summary: 'This document',
          responses: {
            '200': {
              description: 'The OpenAPI 3.1 document',
              content: { 'application/json': { schema: { type: 'object' } } },
            },
            ...problems(),
          },
        },
      },
    },
  });
}
