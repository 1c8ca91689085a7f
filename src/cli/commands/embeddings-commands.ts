import type { Command } from 'commander';
import { SingleBar } from 'cli-progress';
import { agentConfig, loadKeelSettings } from '../../config/agent-config';
import { recallSetting } from '../../embeddings/recall-setting';
import { backfillVectors, type BackfillReport } from '../../embeddings/backfill-vectors';
import { Embedder } from '../../embeddings/embedder';
import { parseSessionKey } from '../../sessions/session-key';
import { sessionIdsOfKey } from '../../store/session-ids-repo';
import { vectorCoverage } from '../../store/embeddings-repo';
import { DEFAULT_CLI_AGENT, printResult, say, withStore, type CliContext, type JsonOption } from './shared';

/** `keel embeddings backfill`: gives an agent's (or one session's) existing entries their vectors now, with a progress bar. */
export function registerEmbeddingsCommands(program: Command, ctx: CliContext): void {
  const embeddings = program.command('embeddings').description('the vectors of hybrid recall');
  embeddings
    .command('backfill')
    .description(
      'embed the entries that have no vector yet under the agent’s embedding model (the worker does it in the background too)',
    )
    .option('--agent <id>', `the agent (default ${DEFAULT_CLI_AGENT})`)
    .option('--session <key>', 'only this session key, e.g. agent:main:main')
    .option('--json', 'print the report on stdout')
    .action(async (opts: JsonOption & { agent?: string; session?: string }) => {
      const agentId = (opts.session ? parseSessionKey(opts.session).agentId : opts.agent) ?? DEFAULT_CLI_AGENT;
      const setting = recallSetting(agentConfig(loadKeelSettings(), agentId));
      if (setting.mode !== 'hybrid') {
        say(`embeddings backfill: agent ${agentId} recalls by keywords only: ${setting.why}`);
        ctx.exitCode = 1;
        return;
      }
      const embedder = new Embedder(setting.endpoint);
      const reports = await withStore(async ({ db }) => {
        const sessionIds: (string | undefined)[] = opts.session
          ? (await sessionIdsOfKey(db, agentId, opts.session)).map((s) => s.sessionId)
          : [undefined];
        const done: BackfillReport[] = [];
        for (const sessionId of sessionIds) {
          const total = sessionId
            ? await vectorCoverage(db, agentId, [sessionId], embedder.model).then((c) => c.entries - c.withVectors)
            : undefined;
          const bar = new SingleBar({
            format: `embedding ${sessionId ?? agentId}: {value}${total !== undefined ? '/{total}' : ''} entries`,
            stream: process.stderr,
          });
          bar.start(total ?? 0, 0);
          try {
            done.push(
              await backfillVectors({
                db,
                embedder,
                agentId,
                ...(sessionId ? { sessionId } : {}),
                onBatch: (n) => bar.increment(n),
              }),
            );
          } finally {
            bar.stop();
          }
        }
        return done;
      });
      const embedded = reports.reduce((n, r) => n + r.embedded, 0);
      printResult(opts, { agentId, model: embedder.model, embedded });
      if (!opts.json) say(`embedded ${embedded} entries of agent ${agentId} with ${embedder.model}`);
    });
}
