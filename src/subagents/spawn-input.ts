/**
 * What the model gives `sessions_spawn`, checked before anything starts. The task is the child's
 * whole context: a subagent knows only what its task (and attachments) say.
 */
import { createHash } from 'node:crypto';
import { basename, posix } from 'node:path';
import { z } from 'zod';
import { DEFAULTS } from '../config/defaults';

const attachment = z.object({
  name: z.string().trim().min(1, 'name the attachment (a file name)').max(200, 'use a name of at most 200 characters'),
  content: z.string().describe('the file content; base64 when encoding is "base64"'),
  encoding: z.enum(['utf8', 'base64'], { message: 'use "utf8" or "base64"' }).optional(),
});

export const sessionsSpawnInput = z.object({
  task: z.string().trim().min(1, 'describe the task in detail: the subagent knows only what this says'),
  agentId: z.string().trim().min(1).optional().describe('the agent that runs the task; default: your own agent'),
  mode: z
    .enum(['run', 'session'], {
      message: 'use "run" (one task, then it ends) or "session" (stays, takes more messages)',
    })
    .optional(),
  label: z.string().trim().min(1).max(80, 'use a label of at most 80 characters').optional(),
  attachments: z.array(attachment).max(10, 'attach at most 10 files').optional(),
  budget: z
    .object({
      maxModelCalls: z.number().int().min(2, 'use at least 2 model calls (the last is its report)').optional(),
      maxTokens: z.number().int().positive('use tokens > 0').optional(),
    })
    .optional()
    .describe(
      "the subagent's run budget (model calls, tokens); default: its agent's. At the budget it reports where it stands",
    ),
});

export type SessionsSpawnInput = z.infer<typeof sessionsSpawnInput>;

/** A binary attachment: saved as a file in the child's workspace, at `path` (relative to it). */
export interface SpawnFile {
  readonly name: string;
  readonly path: string;
  readonly bytes: Buffer;
}

/**
 * The child's first message: the task, then each text attachment as a fenced block; bounded as a
 * whole. A base64 attachment that is not UTF-8 text (an image, an archive) is never decoded into
 * the message: it is returned as a file for the child's workspace, under `filesDir`, byte for
 * byte, and the message names its path, size and SHA-256.
 */
export function renderSpawnTask(
  input: SessionsSpawnInput,
  filesDir: string,
): { text: string; files: SpawnFile[] } | { problem: string } {
  const parts = [input.task];
  const files: SpawnFile[] = [];
  for (const a of input.attachments ?? []) {
    const bytes = a.encoding === 'base64' ? Buffer.from(a.content, 'base64') : undefined;
    const text = bytes ? utf8Text(bytes) : a.content;
    if (text !== undefined) {
      parts.push(`Attachment ${a.name}:\n\`\`\`\n${text}\n\`\`\``);
      continue;
    }
    if (basename(a.name) !== a.name || a.name === '.' || a.name === '..')
      return {
        problem: `attachments: "${a.name}" is binary and saved as a file: name it without folders (e.g. "map.png")`,
      };
    const path = posix.join(filesDir, a.name);
    files.push({ name: a.name, path, bytes: bytes! });
    const sha256 = createHash('sha256').update(bytes!).digest('hex');
    parts.push(
      `Attachment ${a.name}: binary, ${bytes!.length} bytes (SHA-256 ${sha256}), saved in your workspace as ${path}`,
    );
  }
  const text = parts.join('\n\n');
  if (text.length > DEFAULTS.subagentTaskChars) {
    return {
      problem: `task and attachments are ${text.length} characters; keep them under ${DEFAULTS.subagentTaskChars} (point the subagent at files in the workspace instead)`,
    };
  }
  return { text, files };
}

/** The bytes as text when they are valid UTF-8, else undefined (a decoder would replace what is not). */
function utf8Text(bytes: Buffer): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}
