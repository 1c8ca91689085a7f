import type { Command } from 'commander';
import { agentConfig, loadKeelSettings } from '../../config/agent-config';
import { replayCommand, type ReplayCommandOptions } from '../replay';
import { printResult, withStore } from './shared';

/** `keel replay`: what a session would have looked like under another policy. */
export function registerReplayCommands(program: Command): void {
  program
    .command('replay')
    .description(
      'replay a session (or an OpenClaw .jsonl transcript) through Keel’s context pipeline under a policy; read-only, no Temporal',
    )
    .argument('<source>', 'a session key (e.g. agent:main:main) or a .jsonl transcript file')
    .option(
      '--policy <file>',
      'policy JSON (a subset of keel.config.json: contextWindowTokens, reserveTokens, reserveTokensFloor, keepRecentTokens, contextEngine, contextEngineOptions, softThresholdTokens, compactionMinReclaimShare, overheadTokens); default: the current configuration',
    )
    .option('--compare <file>', 'a second policy to replay and compare against the first')
    .option('--html <file>', 'write a self-contained HTML report (charts, differences) to this file')
    .option(
      '--agent <id>',
      'the agent, when the key does not name one (and whose configuration a .jsonl replays under)',
    )
    .option('--json', 'print the report on stdout')
    .action(async (source: string, opts: ReplayCommandOptions) => {
      const settings = loadKeelSettings();
      const report = await replayCommand(source, opts, {
        configFor: (agentId) => agentConfig(settings, agentId),
        withDb: (fn) => withStore((s) => fn(s.db)),
      });
      printResult(opts, report);
    });
}
