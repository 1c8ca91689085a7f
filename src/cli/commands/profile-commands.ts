import type { Command } from 'commander';
import { createInterface } from 'node:readline/promises';
import { loadKeelSettings } from '../../config/agent-config';
import { parseSessionKey } from '../../sessions/session-key';
import { profileLines } from '../../profile/session-profile';
import { UsageError } from '../connect';
import { applyProfile, statusOverhead } from '../profile';
import { profileStoredSession } from '../../operations/sessions/session-profile';
import { DEFAULT_CLI_AGENT, allowedAgent, printResult, say, withStore, type JsonOption } from './shared';

/** A yes/no question on the terminal (stderr, so stdout stays data). */
async function ask(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await rl.question(question);
  } finally {
    rl.close();
  }
}

/** `keel profile <sessionKey> [--apply [--yes]]`: the session's work style, what eats its context, and the settings it needs. */
export function registerProfileCommands(program: Command): void {
  program
    .command('profile')
    .description(
      "classify a session (tool-heavy, conversational, mixed, bursty) with the evidence, estimate what eats its context, and compare its agent's settings with the recommended ones; --apply writes them",
    )
    .argument('<sessionKey>', 'e.g. agent:main:main')
    .option('--agent <id>', 'the agent, when the key does not name one')
    .option(
      '--apply',
      "write the recommended settings into the agent's section of the config file (backup and rollback note first)",
    )
    .option('--yes', 'apply without asking (needed when stdin is not a terminal)')
    .option('--json', 'print { profile, apply? } on stdout')
    .action(async (sessionKey: string, opts: JsonOption & { agent?: string; apply?: boolean; yes?: boolean }) => {
      if (opts.yes && !opts.apply) throw new UsageError('--yes confirms --apply; add --apply, or leave --yes out');
      const settings = loadKeelSettings();
      const agentId = allowedAgent(parseSessionKey(sessionKey).agentId ?? opts.agent ?? DEFAULT_CLI_AGENT);
      // The baseline is the split `keel status` shows, from the same workers; unknown without them.
      const overhead = await statusOverhead(settings.defaults, sessionKey);
      const profile = await withStore((s) =>
        profileStoredSession(s.db, settings, {
          sessionKey,
          defaultAgentId: agentId,
          ...(overhead ? { overhead } : {}),
        }),
      );
      if (!opts.json || opts.apply) say(profileLines(profile).join('\n'));
      const apply = opts.apply
        ? await applyProfile(profile, settings, {
            yes: Boolean(opts.yes),
            interactive: Boolean(process.stdin.isTTY),
            ask,
            say,
            now: new Date(),
          })
        : undefined;
      printResult(opts, { profile, ...(apply ? { apply } : {}) });
    });
}
