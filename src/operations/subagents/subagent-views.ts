/** The views of the subagent operations: list, kill, steer. */
import { z } from 'zod';
import 'zod-openapi';
import { count } from '../view-fields';

/** One subagent run, as `keel subagents` lists it. */
export const subagentListing = z
  .strictObject({
    id: z.string(),
    label: z.string().nullable(),
    status: z.string(),
    mode: z.string(),
    depth: count,
    agentId: z.string(),
    parentSessionKey: z.string(),
    childSessionKey: z.string(),
    task: z.string(),
    createdAt: z.iso.datetime(),
    endedAt: z.iso.datetime().nullable(),
    result: z.string().nullable(),
  })
  .meta({ id: 'Subagent' });

/** `GET /v1/sessions/{sessionKey}/subagents`: `keel subagents --json` of the session's agent. */
export const subagentsList = z.strictObject({ subagents: z.array(subagentListing) }).meta({ id: 'SubagentsList' });

/** `POST /v1/subagents/{id}/kill`. */
export const killResult = z
  .strictObject({ id: z.string(), killed: z.boolean(), message: z.string() })
  .meta({ id: 'KillResult' });

/** `POST /v1/subagents/{id}/steer`. */
export const steerResult = z
  .strictObject({ id: z.string(), sent: z.boolean(), message: z.string() })
  .meta({ id: 'SteerResult' });
