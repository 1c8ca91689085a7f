/**
 * `keel profile <sessionKey> [--apply]`: the session's profile (`profileStoredSession`) and,
 * with --apply, writes the recommended settings into the agent's section of the config file, after a
 * timestamped backup and a rollback note next to it; shows the exact file, keys and old → new values
 * first, and asks on a terminal (or takes --yes).
 */
import { constants, copyFileSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { agentConfig, loadKeelSettings, type KeelSettings } from '../config/agent-config';
import { DEFAULTS } from '../config/defaults';
import type { SessionProfile } from '../profile/session-profile';
import { adviseSettings, currentSettings } from '../profile/config-advice';
import { changeLine, planConfigChanges, type FileChange } from '../profile/config-changes';
import { connectClient } from './connect';
import type { KeelConfig } from '../config/keel-config';
import type { PromptOverhead } from '../context/context-split';

/**
 * The session's system prompt, workspace files and tools as `keel status` reports them (the split of
 * its last call), or undefined when no workers answer for it in time (Temporal unset or unreachable).
 */
export async function statusOverhead(config: KeelConfig, sessionKey: string): Promise<PromptOverhead | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>(
    (resolve) => (timer = setTimeout(() => resolve(undefined), DEFAULTS.profileStatusTimeoutMs)),
  );
  const asked = (async () => {
    const { client, close } = await connectClient(config);
    try {
      return (await client.getStatus(sessionKey)).contextSplit;
    } finally {
      await close();
    }
  })().catch(() => undefined);
  try {
    return await Promise.race([asked, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** What `--apply` did. */
export interface ApplyReport {
  readonly file: string;
  readonly changes: FileChange[];
  readonly applied: boolean;
  readonly backup?: string;
  readonly rollbackNote?: string;
}

export interface ApplyOptions {
  readonly yes: boolean;
  /** stdin is a terminal: a person can be asked. */
  readonly interactive: boolean;
  readonly ask: (question: string) => Promise<string>;
  readonly say: (text: string) => void;
  readonly now: Date;
}

/**
 * Writes the profile's advice into the agent's section of the config file. Nothing is written unless
 * confirmed (--yes, or "y" on a terminal); the backup and rollback note come first, and the new file
 * must load with Keel's own loader, else the backup is put back.
 */
export async function applyProfile(
  profile: SessionProfile,
  settings: KeelSettings,
  opts: ApplyOptions,
): Promise<ApplyReport> {
  const file = settings.file;
  if (!file)
    throw new Error(
      'no config file to write: create keel.config.json (`{}` is enough) in this folder, or point KEEL_CONFIG at yours, then run again',
    );
  const { json, changes } = planConfigChanges(JSON.parse(readFileSync(file, 'utf8')), profile.agentId, profile.advice);
  if (changes.length === 0) {
    opts.say(
      `${file}: agent ${profile.agentId} already runs with the ${profile.advice.style} settings; nothing to write`,
    );
    return { file, changes, applied: false };
  }
  const stamp = opts.now.toISOString().replace(/[:.]/g, '-');
  const backup = `${file}.${stamp}.bak`;
  const rollbackNote = `${file}.${stamp}.rollback.md`;
  opts.say(
    [
      `File: ${file}`,
      `Changes for agent ${profile.agentId} (${profile.advice.style} work):`,
      ...changes.map((c) => `  ${changeLine(c)}`),
      `What happens: workers read the file when they start; restart the workers serving agent ${profile.agentId} for the change to take effect (their sessions carry on).`,
      `Safety net: the file is copied to ${backup} first, and ${rollbackNote} says how to undo.`,
    ].join('\n'),
  );
  if (!opts.yes) {
    if (!opts.interactive)
      throw new Error(
        'stdin is not a terminal, so nobody can confirm: nothing was written; run again with --yes to apply these changes',
      );
    const answer = (await opts.ask('Apply these changes? [y/N] ')).trim().toLowerCase();
    if (answer !== 'y' && answer !== 'yes') {
      opts.say('not applied; nothing was written');
      return { file, changes, applied: false };
    }
  }
  copyFileSync(file, backup, constants.COPYFILE_EXCL);
  writeFileSync(rollbackNote, rollbackText({ file, backup, profile, changes, at: opts.now }), { flag: 'wx' });
  const temporary = `${file}.${stamp}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(json, null, 2)}\n`);
  renameSync(temporary, file);
  try {
    const reloaded = loadKeelSettings({ env: { ...process.env, KEEL_CONFIG: file } });
    const left = adviseSettings(
      currentSettings(agentConfig(reloaded, profile.agentId)),
      profile.advice.style,
      profile.estimate.window,
    ).changes;
    if (left.length > 0)
      opts.say(
        `warning: agent ${profile.agentId} still differs in ${left.map((a) => a.key).join(', ')} (something else overrides the file)`,
      );
  } catch (err) {
    copyFileSync(backup, file);
    throw new Error(
      `the new ${file} did not load, so the backup was put back: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
  opts.say(`applied ${changes.length} changes to ${file}\nbackup: ${backup}\nrollback: ${rollbackNote}`);
  return { file, changes, applied: true, backup, rollbackNote };
}

function rollbackText(r: {
  file: string;
  backup: string;
  profile: SessionProfile;
  changes: FileChange[];
  at: Date;
}): string {
  const quote = (path: string) => `'${path.replace(/'/g, `'\\''`)}'`;
  return [
    `# Rollback: keel profile --apply of ${r.at.toISOString()}`,
    '',
    `\`keel profile ${r.profile.sessionKey} --apply\` changed ${r.file} for agent ${r.profile.agentId} (${r.profile.advice.style} work):`,
    '',
    ...r.changes.map((c) => `- ${changeLine(c)}`),
    '',
    'To undo, put the backup taken just before back over the file:',
    '',
    `    cp ${quote(r.backup)} ${quote(r.file)}`,
    '',
    `then restart the workers serving agent ${r.profile.agentId} (they read the file when they start).`,
    '',
  ].join('\n');
}
