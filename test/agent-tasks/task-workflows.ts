/**
 * An application's workflows that run Keel agent tasks (bundled for the application's own worker in
 * run-agent-task.test.ts): a fan-out over several questions, and one task a test cancels.
 */
import { runAgentTask, type AgentTask, type AgentTaskResult } from '../../workflows/run-agent-task';

/** Runs every task at once and returns their results in the order asked. */
export async function fanOutWorkflow(tasks: readonly AgentTask[]): Promise<AgentTaskResult[]> {
  return Promise.all(tasks.map((task) => runAgentTask(task)));
}
