/**
 * This application's own Keel task queue, unless KEEL_TASK_QUEUE names another. Keel's default queue
 * (`keel`) is the one `keel dev` and `keel worker` poll: a task of this application taken there would
 * find no `lookup` tool and fail. Imported first by the Keel worker and the client, so both load
 * their settings with it.
 */
process.env.KEEL_TASK_QUEUE ||= 'agent-fan-out';

/** Every cause of a failure, outermost first: `Workflow execution failed` alone does not say why. */
export function failureChain(err: unknown): string {
  const messages: string[] = [];
  for (let e: unknown = err; e instanceof Error && messages.length < 8; e = e.cause) messages.push(e.message);
  return messages.length > 0 ? messages.join(': ') : String(err);
}
