import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { DEFAULTS } from '../config/defaults';
import { createKeelLogger } from '../observability/logger';
import type { ApiDeps, RouteDeps } from './api-deps';
import { KeelOperations } from '../operations/keel-operations';
import { bearerAuth } from './bearer-auth';
import { openApiDocument } from './openapi';
import { ApiProblem, problemFor, problemResponse } from './problem';
import { registerCompactionRoutes } from './routes/compactions';
import { registerEventRoutes } from './routes/events';
import { registerMessageRoutes } from './routes/messages';
import { registerSessionRoutes } from './routes/sessions';
import { registerConsoleDataRoutes } from './routes/console-data';
import { registerSubagentRoutes } from './routes/subagents';
import { registerReplayRoutes } from './routes/replay';
import { registerApprovalRoutes } from './routes/approvals';
import { registerConsoleLogin, registerConsoleRoutes } from '../console/console-routes';

/**
 * The HTTP API as a Hono app: bearer auth on every route (when there is a token), a body size limit,
 * the routes, the operators' console at `/`, and problem details for every error. Served by `serveApi`; see docs/http-api.md.
 */
export function createApiApp(deps: ApiDeps): Hono {
  const app = new Hono();
  const logger = deps.logger ?? createKeelLogger();
  // The console's login form is the one thing open without the token.
  if (deps.token) registerConsoleLogin(app, deps.token);
  if (deps.token) app.use('*', bearerAuth(deps.token));
  app.use(
    '*',
    bodyLimit({
      maxSize: DEFAULTS.apiMaxBodyBytes,
      onError: (c) =>
        problemResponse(
          c,
          new ApiProblem(
            413,
            'too-large',
            `body: over ${DEFAULTS.apiMaxBodyBytes} bytes; send large content as a file or a tool result`,
            'body',
          ),
        ),
    }),
  );
  const routes: RouteDeps = { ...deps, operations: new KeelOperations(deps) };
  const document = openApiDocument();
  app.get('/openapi.json', (c) => c.json(document));
  registerMessageRoutes(app, deps);
  registerSessionRoutes(app, routes);
  registerEventRoutes(app, deps);
  registerCompactionRoutes(app, routes);
  registerConsoleDataRoutes(app, routes);
  registerSubagentRoutes(app, { ...routes, logger });
  registerReplayRoutes(app, routes);
  registerApprovalRoutes(app, routes);
  registerConsoleRoutes(app);
  app.notFound((c) =>
    problemResponse(
      c,
      new ApiProblem(404, 'no-route', `no route ${c.req.method} ${c.req.path}; GET /openapi.json lists them`),
    ),
  );
  app.onError((err, c) => problemResponse(c, problemFor(err, deps.dependencies)));
  return app;
}
