/** True when a call reached a workflow that has completed (it closed idle, or its run ended), anywhere in the cause chain. */
export function isClosedWorkflow(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 6; e = (e as { cause?: unknown }).cause, depth++) {
    const name = (e as { name?: string }).name;
    const message = String((e as { message?: string }).message ?? '');
    if (name === 'WorkflowNotFoundError' || /workflow execution already completed|not found/i.test(message)) return true;
  }
  return false;
}
