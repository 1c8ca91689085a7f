import type { Hono } from 'hono';
import { forKnownSession } from '../../operations/sessions/session-errors';
import type { RouteDeps } from '../api-deps';
import { allowedAgentParam, ofAllowedAgents } from '../allowed';
import { parseBody, parsePath, parseQuery } from '../parse-request';
import { compactBody, sessionKeyParams, sessionsQuery, thinkingBody } from '../request-schemas';

/** `GET /v1/sessions`, `GET /v1/sessions/{sessionKey}`, `POST /v1/sessions/{sessionKey}/compact` and `…/thinking`. */
export function registerSessionRoutes(app: Hono, deps: RouteDeps): void {
  app.get('/v1/sessions', async (c) => {
    const query = parseQuery(c, sessionsQuery);
    const agentId = query.agent === undefined ? undefined : allowedAgentParam(deps, query.agent);
    const { sessions } = await deps.operations.sessions.list({
      ...(agentId ? { agentId } : {}),
      ...(query.active !== undefined ? { activeMinutes: query.active } : {}),
    });
    return c.json({ sessions: ofAllowedAgents(deps, sessions) });
  });

  app.get('/v1/sessions/:sessionKey', async (c) => {
    const { sessionKey } = parsePath(c, sessionKeyParams);
    deps.client.identify(sessionKey);
    return c.json(await deps.operations.sessions.status({ sessionKey }));
  });

  app.post('/v1/sessions/:sessionKey/compact', async (c) => {
    const { sessionKey } = parsePath(c, sessionKeyParams);
    const body = await parseBody(c, compactBody);
    deps.client.identify(sessionKey);
    return c.json(await forKnownSession(sessionKey, () => deps.client.compact(sessionKey, body)));
  });

  app.get('/v1/sessions/:sessionKey/thinking', async (c) => {
    const { sessionKey } = parsePath(c, sessionKeyParams);
    return c.json(await deps.operations.sessions.thinking({ sessionKey }));
  });

  app.post('/v1/sessions/:sessionKey/thinking', async (c) => {
    const { sessionKey } = parsePath(c, sessionKeyParams);
    const { level } = await parseBody(c, thinkingBody);
    return c.json(await deps.operations.sessions.thinking({ sessionKey, level }));
  });
}
