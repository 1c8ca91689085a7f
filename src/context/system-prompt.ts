/**
 * System prompt assembly by mode (OpenClaw's system prompt construction).
 */

/** `full` for main agents, `minimal` for subagents (tooling + workspace + runtime), `none` identity only. */
export type PromptMode = 'full' | 'minimal' | 'none';

/** The identity line used when the caller gives none. */
export const DEFAULT_IDENTITY_LINE = 'You are a personal assistant running inside Keel.';

export interface ToolDescription {
  name: string;
  description?: string;
}

/** Section texts; absent or blank sections are left out. */
export interface SystemPromptParts {
  identity?: string;
  tools?: readonly ToolDescription[];
  toolCallStyle?: string;
  safety?: string;
  skills?: string;
  memory?: string;
  messaging?: string;
  /** Working directory and sandbox information. */
  workspace?: string;
  /** Bootstrap file text (see `buildBootstrapContext`), part of the workspace section. */
  bootstrap?: string;
  /** Runtime facts: model, host, date and time zone. */
  runtime?: string;
  /** What the memory flush saved before the last compaction (checkpoint, where the notes are). */
  afterCompaction?: string;
  /** Extra text a context engine asked for (`systemPromptAddition`). */
  addition?: string;
}

/**
 * Builds the system prompt: `none` is the identity line only; `minimal` adds Tooling, Workspace
 * (with bootstrap files), After Compaction and Runtime; `full` has every section in a fixed order. An engine's
 * `addition` ends `full` and `minimal` prompts.
 */
export function buildSystemPrompt(mode: PromptMode, parts: SystemPromptParts = {}): string {
  const identity = parts.identity?.trim() || DEFAULT_IDENTITY_LINE;
  if (mode === 'none') return identity;

  const tooling =
    parts.tools && parts.tools.length > 0
      ? parts.tools.map((t) => (t.description ? `- ${t.name}: ${t.description}` : `- ${t.name}`)).join('\n')
      : undefined;
  const workspace = [parts.workspace, parts.bootstrap].filter(nonBlank).join('\n\n');
  const sections: Array<[string, string | undefined]> =
    mode === 'minimal'
      ? [
          ['Tooling', tooling],
          ['Workspace', workspace],
          ['After Compaction', parts.afterCompaction],
          ['Runtime', parts.runtime],
        ]
      : [
          ['Tooling', tooling],
          ['Tool Call Style', parts.toolCallStyle],
          ['Safety', parts.safety],
          ['Skills', parts.skills],
          ['Memory Recall', parts.memory],
          ['Messaging', parts.messaging],
          ['Workspace', workspace],
          ['After Compaction', parts.afterCompaction],
          ['Runtime', parts.runtime],
        ];
  const body = sections
    .filter(([, text]) => nonBlank(text))
    .map(([title, text]) => `## ${title}\n${(text as string).trim()}`);
  return [identity, ...body, ...(nonBlank(parts.addition) ? [parts.addition.trim()] : [])].join('\n\n');
}

function nonBlank(text: string | undefined): text is string {
  return typeof text === 'string' && text.trim().length > 0;
}
