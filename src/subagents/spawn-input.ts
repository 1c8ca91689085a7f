/**
 * What the model gives `sessions_spawn`, checked before anything starts. The task is the child's
 * whole context: a subagent knows only what its task (and attachments) say.
 */
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

/** The child's first message: the task, then each attachment as a fenced block; bounded as a whole. */
export function renderSpawnTask(input: SessionsSpawnInput): { text: string } | { problem: string } {
  const parts = [input.task];
  for (const a of input.attachments ?? []) {
    const body = a.encoding === 'base64' ? Buffer.from(a.content, 'base64').toString('utf8') : a.content;
    parts.push(`Attachment ${a.name}:\n\`\`\`\n${body}\n\`\`\``);
  }
  const text = parts.join('\n\n');
  if (text.length > DEFAULTS.subagentTaskChars) {
    return {
      problem: `task and attachments are ${text.length} characters; keep them under ${DEFAULTS.subagentTaskChars} (point the subagent at files in the workspace instead)`,
    };
  }
  return { text };
}
