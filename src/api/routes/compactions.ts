import type { Context, Hono } from 'hono';
import { agentConfig } from '../../config/agent-config';
import { configuredWindow } from '../../config/configured-window';
import { compactionsList, compactionsRetry } from '../../cli/compactions';
import { compactionsRerun, compactionsRevert } from '../../cli/compaction-edits';
import type { ApiDeps } from '../api-deps';
import { allowedAgentParam, ofAllowedAgents } from '../allowed';
import { parseBody, parsePath, parseQuery } from '../parse-request';
import { compactionsQuery, rerunBody, retryParams, retryQuery } from '../request-schemas';

/**
 * `GET /v1/compactions?failed=true` and `POST /v1/compactions/{id}/retry`, `…/revert` and `…/rerun`:
 * `keel compactions [--failed]`, `retry`, `revert` and `rerun`, through the same functions.
 */
export function registerCompactionRoutes(app: Hono, deps: ApiDeps): void {
  app.get('/v1/compactions', async (c) => {
    const query = parseQuery(c, compactionsQuery);
    const agentId = query.agent === undefined ? undefined : allowedAgentParam(deps, query.agent);
    const list = await compactionsList({
      db: deps.db,
      failed: query.failed === 'true',
      ...(agentId ? { agentId } : {}),
      json: true,
    });
    const compactions = ofAllowedAgents(deps, list.compactions);
    return c.json(
      list.pausedSessions
        ? { compactions, pausedSessions: ofAllowedAgents(deps, list.pausedSessions) }
        : { compactions },
    );
  });

  /** What the CLI's compaction edits take: the compaction named by the path, its agent by the query. */
  const editOf = (c: Context) => {
    const { id } = parsePath(c, retryParams);
    const agentId = allowedAgentParam(deps, parseQuery(c, retryQuery).agent);
    const contextWindowFor = (agent: string) => configuredWindow(agentConfig(deps.settings, agent)).tokens;
    return {
      db: deps.db,
      temporalClient: deps.client.temporal,
      taskQueue: deps.settings.defaults.taskQueue,
      agentId,
      id,
      contextWindowFor,
      json: true,
    };
  };

  app.post('/v1/compactions/:id/retry', async (c) => c.json(await compactionsRetry(editOf(c))));
  app.post('/v1/compactions/:id/revert', async (c) => c.json(await compactionsRevert(editOf(c))));
  app.post('/v1/compactions/:id/rerun', async (c) => {
    const edit = editOf(c);
    const body = await parseBody(c, rerunBody);
    return c.json(await compactionsRerun({ ...edit, ...body }));
  });
}
