/**
 * Spawn policy by context pressure: as the context window fills, work moves to subagents so the
 * main session keeps room for the conversation. Pure and workflow-safe (status computes the advice
 * in a workflow Query); the workspace's `.context-policy.yml` may override the defaults.
 */

/** normal < 50% ≤ elevated < 70% ≤ high < 85% ≤ critical (default thresholds). */
export type SpawnLevel = 'normal' | 'elevated' | 'high' | 'critical';

export interface SpawnPolicy {
  /** Percent of the context window where each level starts (ascending). */
  readonly thresholds: { readonly elevated: number; readonly high: number; readonly critical: number };
  /** At each level, work needing more than this many tool calls goes to a subagent. */
  readonly toolCalls: { readonly elevated: number; readonly high: number };
  /** Tasks spawned whatever the context level. */
  readonly alwaysSpawn: readonly string[];
  /** Tasks kept in the main session whatever the context level. */
  readonly neverSpawn: readonly string[];
}

export const DEFAULT_SPAWN_POLICY: SpawnPolicy = {
  thresholds: { elevated: 50, high: 70, critical: 85 },
  toolCalls: { elevated: 3, high: 1 },
  alwaysSpawn: [
    'Test suites (more than 3 tests)',
    'Multi-file audits (more than 5 files)',
    'Build and deploy pipelines',
    'Research tasks (web search and analysis)',
    'Bulk file operations',
  ],
  neverSpawn: [
    'Single commands',
    'Conversations and discussions',
    'Quick edits (1-3 files)',
    'Status checks',
    "Tasks that need the user's input while they run",
  ],
};

/** The level and what the agent should do at it (status shows both). */
export interface SpawnAdvice {
  readonly level: SpawnLevel;
  readonly instruction: string;
}

export function spawnLevel(percentUsed: number, policy: SpawnPolicy = DEFAULT_SPAWN_POLICY): SpawnLevel {
  const t = policy.thresholds;
  if (percentUsed >= t.critical) return 'critical';
  if (percentUsed >= t.high) return 'high';
  if (percentUsed >= t.elevated) return 'elevated';
  return 'normal';
}

export function spawnAdvice(percentUsed: number, policy: SpawnPolicy = DEFAULT_SPAWN_POLICY): SpawnAdvice {
  const level = spawnLevel(percentUsed, policy);
  return { level, instruction: levelInstruction(level, policy) };
}

function levelInstruction(level: SpawnLevel, policy: SpawnPolicy): string {
  switch (level) {
    case 'normal':
      return 'Context use is normal: spawn only the always-spawn tasks and keep other work here.';
    case 'elevated':
      return `Context is filling up: hand remaining tool-heavy work (more than ${calls(policy.toolCalls.elevated)}) to subagents.`;
    case 'high':
      return `Context is running high: hand any tool work (more than ${calls(policy.toolCalls.high)}) to subagents, and warn the user that context is running high.`;
    case 'critical':
      return 'Context is critical: write a checkpoint of where the work stands (current task, key state, decisions, files changed, next steps) and suggest the user run /compact or start over with /new.';
  }
}

const listed = (items: readonly string[]) => (items.length > 0 ? items.join('; ') : 'nothing listed');
const calls = (n: number) => `${n} tool call${n === 1 ? '' : 's'}`;

/**
 * The policy as the system prompt states it, with the current level's instruction. It names the
 * level, never the exact percentage, so the prompt stays byte-identical (and cached) between level changes.
 */
export function spawnPolicySection(policy: SpawnPolicy, level: SpawnLevel): string {
  const t = policy.thresholds;
  return [
    'Subagents (sessions_spawn) run work in their own context and report back; they know only what the task text tells them, so write detailed tasks.',
    `Always spawn: ${listed(policy.alwaysSpawn)}.`,
    `Never spawn: ${listed(policy.neverSpawn)}.`,
    `Anything else depends on how full the context is: from ${t.elevated}% spawn work needing more than ${calls(policy.toolCalls.elevated)}; from ${t.high}% more than ${calls(policy.toolCalls.high)} (and warn the user); from ${t.critical}% checkpoint and suggest /compact or /new.`,
    `Now: ${levelInstruction(level, policy)}`,
  ].join('\n');
}
