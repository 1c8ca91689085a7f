import type { Hono } from 'hono';
import { agentConfig } from '../../config/agent-config';
import { configuredWindow } from '../../config/configured-window';
import { compactionsList, compactionsRetry } from '../../cli/compactions';
import type { ApiDeps } from '../api-deps';
import { allowedAgentParam, ofAllowedAgents } from '../allowed';
import { parsePath, parseQuery } from '../parse-request';
import { compactionsQuery, retryParams, retryQuery } from '../request-schemas';

/** `GET /v1/compactions?failed=true` and `POST /v1/compactions/{id}/retry`: `keel compactions [--failed]` and `retry`. */
export function registerCompactionRoutes(app: Hono, deps: ApiDeps): void {
  app.get('/v1/compactions', async (c) => {
    const query = parseQuery(c, compactionsQuery);
    const agentId = query.agent === undefined ? undefined : allowedAgentParam(deps, query.agent);
    const list = await compactionsList({ db: deps.db, failed: query.failed === 'true', ...(agentId ? { agentId } : {}), json: true });
    const compactions = ofAllowedAgents(deps, list.compactions);
    return c.json(list.pausedSessions ? { compactions, pausedSessions: ofAllowedAgents(deps, list.pausedSessions) } : { compactions });
  });

  app.post('/v1/compactions/:id/retry', async (c) => {
    const { id } = parsePath(c, retryParams);
    const agentId = allowedAgentParam(deps, parseQuery(c, retryQuery).agent);
    const result = await compactionsRetry({
      db: deps.db,
      temporalClient: deps.client.temporal,
      taskQueue: deps.settings.defaults.taskQueue,
      agentId,
      id,
      contextWindowFor: (agent) => configuredWindow(agentConfig(deps.settings, agent)).tokens,
      json: true,
    });
    return c.json(result);
  });
}
