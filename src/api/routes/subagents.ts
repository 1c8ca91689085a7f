import type { Context, Hono } from 'hono';
import type { Logger } from 'pino';
import type { RouteDeps } from '../api-deps';
import { allowedAgentParam } from '../allowed';
import { parseBody, parsePath, parseQuery } from '../parse-request';
import { sessionKeyParams, steerBody, subagentParams, subagentQuery } from '../request-schemas';

/**
 * `GET /v1/sessions/{sessionKey}/subagents` (the runs its agent spawned, for the tree under it) and
 * `POST /v1/subagents/{id}/kill` and `…/steer`: `keel subagents`, `kill` and `steer`, through the same operations.
 */
export function registerSubagentRoutes(app: Hono, deps: RouteDeps & { readonly logger: Logger }): void {
  app.get('/v1/sessions/:sessionKey/subagents', async (c) => {
    const { sessionKey } = parsePath(c, sessionKeyParams);
    const { agentId } = deps.client.identify(sessionKey);
    return c.json(await deps.operations.subagents.list({ agentId }));
  });

  const runOf = (c: Context) => ({
    id: parsePath(c, subagentParams).id,
    agentId: allowedAgentParam(deps, parseQuery(c, subagentQuery).agent),
  });
  // The outcome goes to the server's log; the answer carries it too.
  const logged = <T extends { id: string; message: string }>(result: T): T => {
    deps.logger.info({ subagentId: result.id }, result.message);
    return result;
  };
  app.post('/v1/subagents/:id/kill', async (c) => c.json(logged(await deps.operations.subagents.kill(runOf(c)))));
  app.post('/v1/subagents/:id/steer', async (c) => {
    const run = runOf(c);
    const { text } = await parseBody(c, steerBody);
    return c.json(logged(await deps.operations.subagents.steer({ ...run, text })));
  });
}
