/** A spawn's binary attachments, written into the child's workspace before the child starts. */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ActivityDeps } from '../../src/runtime/deps';
import type { SpawnFile } from '../../src/subagents/spawn-input';

/**
 * Writes `files` under the child agent's workspace, byte for byte (a retried spawn writes the same
 * bytes again). Returns why it cannot, naming the setting, when the child has no workspace to read
 * them from; undefined once written.
 */
export async function saveSpawnFiles(
  child: { readonly config: Pick<ActivityDeps['config'], 'workspaceDir' | 'workspaceAccess'> },
  childAgentId: string,
  files: readonly SpawnFile[],
): Promise<string | undefined> {
  if (files.length === 0) return undefined;
  const { workspaceDir, workspaceAccess } = child.config;
  if (!workspaceDir || workspaceAccess === 'none')
    return (
      `attachments: ${files.map((f) => f.name).join(', ')} ${files.length === 1 ? 'is' : 'are'} binary, saved as files in the subagent's workspace, ` +
      `and agent "${childAgentId}" has none (set \`workspace\` for it, with workspaceAccess rw or ro); or attach text (utf8)`
    );
  for (const file of files) {
    const path = join(workspaceDir, file.path);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, file.bytes);
  }
  return undefined;
}
