import { randomUUID } from 'node:crypto';
import type { Context, Hono } from 'hono';
import { sql } from 'kysely';
import { streamSSE, type SSEStreamingApi } from 'hono/streaming';
import type { z } from 'zod';
import type { RunBudget, TurnResult } from '../../protocol';
import type { ApiDeps } from '../api-deps';
import { parseBody, parsePath } from '../parse-request';
import { problemFor } from '../problem';
import { messageBody, sessionKeyParams } from '../request-schemas';
import type { messageReply } from '../response-schemas';

/**
 * `POST /v1/sessions/{sessionKey}/messages`: one durable turn. JSON answers with the reply once the
 * turn is over; `Accept: text/event-stream` streams `text` events while the model writes, then one
 * `reply` (or one `error` with a problem). A client that goes away does not cancel the turn: the
 * server keeps following it to its end, so it is stored once, as if the client had stayed.
 */
export function registerMessageRoutes(app: Hono, deps: ApiDeps): void {
  app.post('/v1/sessions/:sessionKey/messages', async (c) => {
    const { sessionKey } = parsePath(c, sessionKeyParams);
    const body = await parseBody(c, messageBody);
    // A bad key or a refused agent is answered before anything is sent.
    deps.client.identify(sessionKey);
    const requestId = body.requestId ?? randomUUID();
    // No turn can be stored without the database: a 503 now, not a request that waits out the outage.
    await sql`select 1`.execute(deps.db);
    if (wantsEventStream(c))
      return streamSSE(c, (stream) =>
        streamTurn(stream, deps, sessionKey, body.text, {
          requestId,
          ...budgetOf(body),
          ...(body.thinking ? { thinking: body.thinking } : {}),
        }),
      );
    const result = await deps.client.sendMessage(sessionKey, body.text, {
      requestId,
      ...budgetOf(body),
      ...(body.thinking ? { thinking: body.thinking } : {}),
    });
    return c.json(messageReplyOf(sessionKey, requestId, result));
  });
}

function wantsEventStream(c: Context): boolean {
  return (c.req.header('accept') ?? '').split(',').some((type) => type.trim().split(';')[0] === 'text/event-stream');
}

/** Streams one turn; once the client has gone, events are dropped but the turn is still followed to its end. */
async function streamTurn(
  stream: SSEStreamingApi,
  deps: ApiDeps,
  sessionKey: string,
  text: string,
  opts: { readonly requestId: string; readonly budget?: RunBudget },
): Promise<void> {
  const send = sseSender(stream);
  const { requestId } = opts;
  try {
    for await (const item of deps.client.streamMessage(sessionKey, text, opts)) {
      if (item.type === 'text') await send('text', { delta: item.delta });
      else if (item.type === 'restart') await send('restart', { soFar: item.soFar });
      else if (item.type === 'tool') await send('tool', { id: item.id, name: item.name, isError: item.isError });
      else await send('reply', messageReplyOf(sessionKey, requestId, item.result));
    }
  } catch (err) {
    await send('error', problemFor(err, deps.dependencies).toJSON());
  }
}

/** Writes named SSE events as JSON until the client goes away; after that, writing does nothing. */
export function sseSender(stream: SSEStreamingApi): (event: string, data: unknown) => Promise<void> {
  let open = true;
  stream.onAbort(() => {
    open = false;
  });
  return async (event, data) => {
    if (!open || stream.aborted) return;
    await stream.writeSSE({ event, data: JSON.stringify(data) }).catch(() => {
      open = false;
    });
  };
}

function messageReplyOf(sessionKey: string, requestId: string, result: TurnResult): z.output<typeof messageReply> {
  return {
    reply: result.reply,
    silent: result.silent,
    sessionKey,
    requestId,
    turn: result.turn,
    usage: result.usage,
    modelCalls: result.modelCalls,
    ...(result.toolCalls
      ? {
          toolCalls: result.toolCalls.map((t) => ({
            ...(t.id ? { id: t.id } : {}),
            name: t.name,
            isError: t.isError,
            ...(t.error ? { error: t.error } : {}),
          })),
        }
      : {}),
    ...(result.toolCallsOmitted ? { toolCallsOmitted: result.toolCallsOmitted } : {}),
    ...(result.compactions ? { compactions: result.compactions } : {}),
    ...(result.stopReason ? { stopReason: result.stopReason } : {}),
  };
}

/** The request's run budget, when it set one. */
function budgetOf(body: z.output<typeof messageBody>): { budget?: RunBudget } {
  if (!body.budget) return {};
  const { maxModelCalls, maxTokens } = body.budget;
  return {
    budget: {
      ...(maxModelCalls !== undefined ? { maxModelCalls } : {}),
      ...(maxTokens !== undefined ? { maxTokens } : {}),
    },
  };
}
