import { WorkflowNotFoundError, isGrpcServiceError } from '@temporalio/client';

/** grpc.status.NOT_FOUND: the server's code for a call to a workflow execution that has completed. */
const GRPC_NOT_FOUND = 5;

/**
 * True when a call reached a session workflow that has completed (it closed idle), anywhere in the
 * cause chain: the client's WorkflowNotFoundError, or the gRPC NOT_FOUND status an Update-with-Start
 * rethrows as is. Classified by type and status code, never by message text: a failure that merely
 * says "not found" (a tool's error, an unknown namespace) is not a closed session.
 */
export function isClosedWorkflow(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 6; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof WorkflowNotFoundError) return true;
    if (isGrpcServiceError(e) && e.code === GRPC_NOT_FOUND) return true;
  }
  return false;
}
