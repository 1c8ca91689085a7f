import type { Context, Hono } from 'hono';
import type { RouteDeps } from '../api-deps';
import { allowedAgentParam, ofAllowedAgents } from '../allowed';
import { parseBody, parsePath, parseQuery } from '../parse-request';
import { compactionsQuery, rerunBody, retryParams, retryQuery } from '../request-schemas';

/**
 * `GET /v1/compactions?failed=true` and `POST /v1/compactions/{id}/retry`, `…/revert` and `…/rerun`:
 * `keel compactions [--failed]`, `retry`, `revert` and `rerun`, through the same operations.
 */
export function registerCompactionRoutes(app: Hono, deps: RouteDeps): void {
  app.get('/v1/compactions', async (c) => {
    const query = parseQuery(c, compactionsQuery);
    const agentId = query.agent === undefined ? undefined : allowedAgentParam(deps, query.agent);
    const list = await deps.operations.compactions.list({ failed: query.failed === 'true', agentId });
    const compactions = ofAllowedAgents(deps, list.compactions);
    return c.json(
      list.pausedSessions
        ? { compactions, pausedSessions: ofAllowedAgents(deps, list.pausedSessions) }
        : { compactions },
    );
  });

  /** The compaction named by the path, its agent by the query. */
  const refOf = (c: Context) => ({
    id: parsePath(c, retryParams).id,
    agentId: allowedAgentParam(deps, parseQuery(c, retryQuery).agent),
  });

  app.post('/v1/compactions/:id/retry', async (c) => c.json(await deps.operations.compactions.retry(refOf(c))));
  app.post('/v1/compactions/:id/revert', async (c) => c.json(await deps.operations.compactions.revert(refOf(c))));
  app.post('/v1/compactions/:id/rerun', async (c) => {
    const ref = refOf(c);
    const body = await parseBody(c, rerunBody);
    return c.json(await deps.operations.compactions.rerun({ ...ref, ...body }));
  });
}
