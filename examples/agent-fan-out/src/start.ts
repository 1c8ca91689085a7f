/**
 * The client: one message to an agent through KeelClient, then the research workflow with its three
 * agent tasks. Prints one JSON object on stdout: { reply, research }.
 */
import { failureChain } from './keel-task-queue';
import { Client, Connection } from '@temporalio/client';
import { KeelClient, keelDataConverter, keyRingFor, loadKeelSettings, temporalConnectionFor } from 'keel-agents';
import type { researchWorkflow } from './workflows';

async function main(): Promise<void> {
  const question = process.argv[2] ?? 'Why do sailing boats have keels?';
  const config = loadKeelSettings().defaults;
  const connection = await Connection.connect(temporalConnectionFor(config));
  const dataConverter = keelDataConverter(keyRingFor(config));
  try {
    const keel = new KeelClient({
      connection,
      namespace: config.temporalNamespace,
      taskQueue: config.taskQueue,
      ...(dataConverter ? { dataConverter } : {}),
    });
    const { reply } = await keel.sendMessage('agent:research:main', `Look up "keel", then answer: ${question}`);

    const client = new Client({
      connection,
      namespace: config.temporalNamespace,
      ...(dataConverter ? { dataConverter } : {}),
    });
    const research = await client.workflow.execute<typeof researchWorkflow>('researchWorkflow', {
      taskQueue: 'research',
      workflowId: `research-${Date.now()}`,
      args: [{ question, keelTaskQueue: config.taskQueue }],
    });
    process.stdout.write(`${JSON.stringify({ reply, research }, null, 2)}\n`);
  } finally {
    await connection.close();
  }
}

main().catch((err: unknown) => {
  // The reason is the innermost cause (a task's failure inside the workflow's), so print them all.
  process.stderr.write(`${failureChain(err)}\n`);
  process.exit(1);
});
