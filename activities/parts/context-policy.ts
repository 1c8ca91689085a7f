/**
 * The workspace's spawn policy: `.context-policy.yml` read through the workspace cache (so it is
 * re-read when it changes, like the bootstrap files), parsed once per content. A bad file is
 * logged once per content and the defaults apply.
 */
import { log } from '@temporalio/activity';
import { CONTEXT_POLICY_FILE, parseContextPolicy } from '../../src/context/context-policy-file';
import { DEFAULT_SPAWN_POLICY, type SpawnPolicy } from '../../src/context/spawn-policy';
import { readWorkspaceFiles, type WorkspaceWatchSettings } from './workspace-cache';

const parsedByFolder = new Map<string, { readonly content: string | undefined; readonly policy: SpawnPolicy }>();

/** The spawn policy of the workspace folder `dir` (the defaults when it has no policy file). */
export async function workspaceSpawnPolicy(
  dir: string | undefined,
  settings: WorkspaceWatchSettings,
): Promise<SpawnPolicy> {
  if (!dir) return DEFAULT_SPAWN_POLICY;
  const [file] = await readWorkspaceFiles(dir, [CONTEXT_POLICY_FILE], settings);
  const content = file?.content;
  const cached = parsedByFolder.get(dir);
  if (cached && cached.content === content) return cached.policy;
  const { policy, warnings } = parseContextPolicy(content);
  for (const warning of warnings) log.warn(warning, { workspace: dir });
  parsedByFolder.set(dir, { content, policy });
  return policy;
}
