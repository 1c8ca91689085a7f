import type { Hono } from 'hono';
import { toCompactionView } from '../../cli/compactions';
import { summaryOf } from '../../cli/compaction-detail';
import { getSession } from '../../store/sessions-repo';
import { fleetPage } from '../../console/fleet-page';
import { transcriptPage } from '../../console/transcript-page';
import { fleetOverview } from '../../console/fleet-overview';
import { contextSeries } from '../../console/context-series';
import { keptBySummary } from '../../compaction/summary-kept';
import type { ApiDeps } from '../api-deps';
import { allowedAgentParam } from '../allowed';
import { parsePath, parseQuery } from '../parse-request';
import { ApiProblem } from '../problem';
import { fleetQuery, sessionKeyParams, transcriptQuery } from '../request-schemas';

/** Compactions a session view lists at most, newest first. */
const SESSION_COMPACTIONS_LIMIT = 50;

/**
 * The reads the console draws from: `GET /v1/console/sessions` (a page of the fleet), `GET
 * /v1/console/overview` (its charts), and a session's transcript (by pages), compactions and context series.
 */
export function registerConsoleDataRoutes(app: Hono, deps: ApiDeps): void {
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
    return c.json(await fleetPage(deps.db, deps.settings, filter, query.page, query.pageSize));
  });

  app.get('/v1/console/overview', async (c) =>
    c.json(await fleetOverview(deps.db, deps.settings, deps.settings.defaults.allowedAgents)),
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
    return c.json(await transcriptPage(deps.db, row.agent_id, row.session_id, query.page, query.pageSize));
  });

  app.get('/v1/sessions/:sessionKey/context-series', async (c) => {
    const { sessionKey } = parsePath(c, sessionKeyParams);
    const row = await sessionOf(sessionKey);
    return c.json(await contextSeries(deps.db, row.agent_id, row.session_id));
  });

  app.get('/v1/sessions/:sessionKey/compactions', async (c) => {
    const { sessionKey } = parsePath(c, sessionKeyParams);
    const row = await sessionOf(sessionKey);
    const rows = await deps.db
      .selectFrom('compactions')
      .selectAll()
      .where('agent_id', '=', row.agent_id)
      .where('session_key', '=', sessionKey)
      .orderBy('started_at', 'desc')
      .orderBy('id')
      .limit(SESSION_COMPACTIONS_LIMIT)
      .execute();
    const compactions = await Promise.all(
      rows.map(async (r) => {
        const summary = await summaryOf(deps.db, r);
        return { ...toCompactionView(r), summary, kept: summary === null ? null : keptBySummary(summary) };
      }),
    );
    return c.json({ compactions });
  });
}
