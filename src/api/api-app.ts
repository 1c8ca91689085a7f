import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { DEFAULTS } from '../config/defaults';
import type { ApiDeps } from './api-deps';
import { bearerAuth } from './bearer-auth';
import { openApiDocument } from './openapi';
import { ApiProblem, problemFor, problemResponse } from './problem';
import { registerCompactionRoutes } from './routes/compactions';
import { registerEventRoutes } from './routes/events';
import { registerMessageRoutes } from './routes/messages';
import { registerSessionRoutes } from './routes/sessions';

/**
 * The HTTP API as a Hono app: bearer auth on every route (when there is a token), a body size limit,
 * the routes, and problem details for every error. Served by `serveApi`; see docs/http-api.md.
 */
export function createApiApp(deps: ApiDeps): Hono {
  const app = new Hono();
  if (deps.token) app.use('*', bearerAuth(deps.token));
  app.use(
    '*',
    bodyLimit({
      maxSize: DEFAULTS.apiMaxBodyBytes,
      onError: (c) => problemResponse(c, new ApiProblem(413, 'too-large', `body: over ${DEFAULTS.apiMaxBodyBytes} bytes; send large content as a file or a tool result`, 'body')),
    }),
  );
  const document = openApiDocument();
  app.get('/openapi.json', (c) => c.json(document));
  registerMessageRoutes(app, deps);
  registerSessionRoutes(app, deps);
  registerEventRoutes(app, deps);
  registerCompactionRoutes(app, deps);
  app.notFound((c) => problemResponse(c, new ApiProblem(404, 'no-route', `no route ${c.req.method} ${c.req.path}; GET /openapi.json lists them`)));
  app.onError((err, c) => problemResponse(c, problemFor(err, deps.dependencies)));
  return app;
}
