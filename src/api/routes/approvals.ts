import type { Hono } from 'hono';
import type { RouteDeps } from '../api-deps';
import { allowedAgentParam, ofAllowedAgents } from '../allowed';
import { parseBody, parsePath, parseQuery } from '../parse-request';
import { approvalBody, approvalParams, approvalsQuery } from '../request-schemas';

/**
 * `GET /v1/approvals` (`keel approvals --json`) and `POST /v1/approvals/{id}` (`keel approve` /
 * `keel deny`), through the same functions: a second decision gets the first outcome back.
 */
export function registerApprovalRoutes(app: Hono, deps: RouteDeps): void {
  app.get('/v1/approvals', async (c) => {
    const { agent } = parseQuery(c, approvalsQuery);
    const agentId = agent !== undefined ? allowedAgentParam(deps, agent) : undefined;
    const { approvals } = await deps.operations.approvals.list({ agentId });
    return c.json({ approvals: ofAllowedAgents(deps, approvals) });
  });

  app.post('/v1/approvals/:id', async (c) => {
    const { id } = parsePath(c, approvalParams);
    const body = await parseBody(c, approvalBody);
    return c.json(
      await deps.operations.approvals.decide({
        id,
        decision: body.decision,
        by: body.by ?? 'api',
        ...(body.note !== undefined ? { note: body.note } : {}),
        ...(body.reason !== undefined ? { reason: body.reason } : {}),
      }),
    );
  });
}
