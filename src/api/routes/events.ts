import type { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { collectAnnounceReplies } from '../../cli/chat-watch';
import { forKnownSession } from '../../cli/session-errors';
import { DEFAULTS } from '../../config/defaults';
import type { ApiDeps } from '../api-deps';
import { parsePath } from '../parse-request';
import { sessionKeyParams } from '../request-schemas';
import { sseSender } from './messages';

/**
 * `GET /v1/sessions/{sessionKey}/events`: what the session says without being asked, as SSE. Today
 * that is its answers to subagents' reports (`announce`), collected as the chat collects them: each
 * is handed to one listener once. The stream runs until the client leaves.
 */
export function registerEventRoutes(app: Hono, deps: ApiDeps): void {
  app.get('/v1/sessions/:sessionKey/events', async (c) => {
    const { sessionKey } = parsePath(c, sessionKeyParams);
    const { workflowId } = deps.client.identify(sessionKey);
    // An unknown session is a 404 before the stream starts.
    await forKnownSession(sessionKey, () => deps.client.temporal.workflow.getHandle(workflowId).describe());
    const pollMs = deps.eventsPollMs ?? DEFAULTS.apiEventsPollMs;
    return streamSSE(c, async (stream) => {
      const send = sseSender(stream);
      while (!stream.aborted) {
        // A failing poll is skipped, as the chat's: the next one may reach the session again.
        const answers = await collectAnnounceReplies(deps.client, sessionKey).catch(() => []);
        for (const a of answers)
          await send('announce', {
            requestId: a.requestId,
            subagentId: a.subagentId,
            reply: a.reply ?? null,
            ...(a.failed !== undefined ? { failed: a.failed } : {}),
          });
        await stream.sleep(pollMs);
      }
    });
  });
}
