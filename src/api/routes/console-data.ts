import type { Hono } from 'hono';
import { getSession } from '../../store/sessions-repo';
import type { RouteDeps } from '../api-deps';
import { allowedAgentParam } from '../allowed';
import { parsePath, parseQuery } from '../parse-request';
import { ApiProblem } from '../problem';
import { fleetQuery, sessionKeyParams, transcriptQuery } from '../request-schemas';

/**
 * The reads the console draws from: `GET /v1/console/sessions` (a page of the fleet), `GET
 * /v1/console/overview` (its charts), and a session's transcript (by pages), compactions and context series.
 */
export function registerConsoleDataRoutes(app: Hono, deps: RouteDeps): void {
  app.get('/v1/console/sessions', async (c) => {
    const query = parseQuery(c, fleetQuery);
    const agentId = query.agent === undefined ? undefined : allowedAgentParam(deps, query.agent);
    const allowed = deps.settings.defaults.allowedAgents;
    const filter = {
      sort: query.sort,
      ...(agentId ? { agentId } : {}),
      ...(allowed ? { agentIds: allowed } : {}),
      ...(query.q ? { keyContains: query.q } : {}),
    };
    return c.json(await deps.operations.fleet.page({ ...filter, page: query.page, pageSize: query.pageSize }));
  });

  app.get('/v1/console/overview', async (c) =>
    c.json(await deps.operations.fleet.overview({ agentIds: deps.settings.defaults.allowedAgents })),
  );

  /** The session's row: its agent and current session id, or a 404 naming the key. */
  const sessionOf = async (sessionKey: string) => {
    const { agentId } = deps.client.identify(sessionKey);
    const row = await getSession(deps.db, agentId, sessionKey);
    if (!row)
      throw new ApiProblem(
        404,
        'unknown-session',
        `sessionKey: no session ${sessionKey}; GET /v1/sessions lists them`,
        'sessionKey',
      );
    return row;
  };

  app.get('/v1/sessions/:sessionKey/transcript', async (c) => {
    const { sessionKey } = parsePath(c, sessionKeyParams);
    const query = parseQuery(c, transcriptQuery);
    const row = await sessionOf(sessionKey);
    return c.json(
      await deps.operations.transcripts.page({
        agentId: row.agent_id,
        sessionId: row.session_id,
        page: query.page,
        pageSize: query.pageSize,
      }),
    );
  });

  app.get('/v1/sessions/:sessionKey/context-series', async (c) => {
    const { sessionKey } = parsePath(c, sessionKeyParams);
    const row = await sessionOf(sessionKey);
    return c.json(await deps.operations.sessions.contextSeries({ agentId: row.agent_id, sessionId: row.session_id }));
  });

  app.get('/v1/sessions/:sessionKey/compactions', async (c) => {
    const { sessionKey } = parsePath(c, sessionKeyParams);
    const row = await sessionOf(sessionKey);
    return c.json(await deps.operations.compactions.ofSession({ agentId: row.agent_id, sessionKey }));
  });
}
