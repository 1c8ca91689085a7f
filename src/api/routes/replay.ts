import type { Hono } from 'hono';
import { renderReplayHtml } from '../../replay/replay-html';
import type { RouteDeps } from '../api-deps';
import { parseBody, parsePath } from '../parse-request';
import { replayBody, sessionKeyParams } from '../request-schemas';

/**
 * `POST /v1/sessions/{sessionKey}/replay`: the session replayed under its agent's configuration and
 * the policy in the body, answered as `keel replay --html` writes it (a page with Chart.js inlined).
 */
export function registerReplayRoutes(app: Hono, deps: RouteDeps): void {
  app.post('/v1/sessions/:sessionKey/replay', async (c) => {
    const { sessionKey } = parsePath(c, sessionKeyParams);
    const { policy } = await parseBody(c, replayBody);
    return c.html(renderReplayHtml(await deps.operations.replay.whatIf({ sessionKey, policy })));
  });
}
