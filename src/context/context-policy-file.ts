/**
 * Reads `.context-policy.yml`, the workspace's override of the spawn policy. Every key is
 * optional and falls back to the default; a file that does not parse or validate yields the
 * defaults and warnings naming the file and the field, never a failed turn.
 */
import { parse } from 'yaml';
import { z } from 'zod';
import { DEFAULT_SPAWN_POLICY, type SpawnPolicy } from './spawn-policy';

export const CONTEXT_POLICY_FILE = '.context-policy.yml';

const percent = z
  .number({ message: 'use a number from 0 to 100' })
  .min(0, 'use a number from 0 to 100')
  .max(100, 'use a number from 0 to 100');
const toolCalls = z
  .number({ message: 'use a whole number of tool calls (0 or more)' })
  .int('use a whole number of tool calls (0 or more)')
  .min(0, 'use a whole number of tool calls (0 or more)');
const tasks = z.array(
  z.string({ message: 'use a list of task descriptions (text)' }).trim().min(1, 'an empty task description; remove it'),
  {
    message: 'use a list of task descriptions, e.g. ["Test suites"]',
  },
);

const fileSchema = z
  .strictObject(
    {
      thresholds: z
        .strictObject(
          { elevated: percent.optional(), high: percent.optional(), critical: percent.optional() },
          { message: 'use a map with elevated, high and critical percentages' },
        )
        .optional(),
      toolCalls: z
        .strictObject(
          { elevated: toolCalls.optional(), high: toolCalls.optional() },
          { message: 'use a map with elevated and high tool-call counts' },
        )
        .optional(),
      alwaysSpawn: tasks.optional(),
      neverSpawn: tasks.optional(),
    },
    { message: 'use a map with thresholds, toolCalls, alwaysSpawn and neverSpawn' },
  )
  .transform((f): SpawnPolicy => ({
    thresholds: {
      elevated: f.thresholds?.elevated ?? DEFAULT_SPAWN_POLICY.thresholds.elevated,
      high: f.thresholds?.high ?? DEFAULT_SPAWN_POLICY.thresholds.high,
      critical: f.thresholds?.critical ?? DEFAULT_SPAWN_POLICY.thresholds.critical,
    },
    toolCalls: {
      elevated: f.toolCalls?.elevated ?? DEFAULT_SPAWN_POLICY.toolCalls.elevated,
      high: f.toolCalls?.high ?? DEFAULT_SPAWN_POLICY.toolCalls.high,
    },
    alwaysSpawn: f.alwaysSpawn ?? DEFAULT_SPAWN_POLICY.alwaysSpawn,
    neverSpawn: f.neverSpawn ?? DEFAULT_SPAWN_POLICY.neverSpawn,
  }))
  .refine((p) => p.thresholds.elevated < p.thresholds.high && p.thresholds.high < p.thresholds.critical, {
    message: 'the levels must rise: elevated < high < critical',
    path: ['thresholds'],
  });

const KNOWN_KEYS: Record<string, string> = {
  '(top level)': 'thresholds, toolCalls, alwaysSpawn, neverSpawn',
  thresholds: 'elevated, high, critical',
  toolCalls: 'elevated, high',
};

export interface ParsedContextPolicy {
  readonly policy: SpawnPolicy;
  /** Why the file was ignored, one line per problem (empty when it was used). */
  readonly warnings: readonly string[];
}

/** The policy `text` (the content of `.context-policy.yml`) describes; `undefined` (no file) is the default. */
export function parseContextPolicy(text: string | undefined): ParsedContextPolicy {
  if (text === undefined) return { policy: DEFAULT_SPAWN_POLICY, warnings: [] };
  let data: unknown;
  try {
    data = parse(text);
  } catch (err) {
    return ignored([
      `${CONTEXT_POLICY_FILE} is not valid YAML (${err instanceof Error ? err.message.split('\n')[0] : String(err)}); fix the syntax`,
    ]);
  }
  if (data === null || data === undefined) return { policy: DEFAULT_SPAWN_POLICY, warnings: [] };
  const result = fileSchema.safeParse(data);
  if (result.success) return { policy: result.data, warnings: [] };
  return ignored(
    result.error.issues.map((issue) => {
      const field = issue.path.length > 0 ? issue.path.join('.') : '(top level)';
      const message =
        issue.code === 'unrecognized_keys'
          ? `unknown key ${issue.keys.map((k) => `"${k}"`).join(', ')}; use ${KNOWN_KEYS[field] ?? KNOWN_KEYS['(top level)']}`
          : issue.message;
      return `${CONTEXT_POLICY_FILE}: ${field}: ${message}`;
    }),
  );
}

function ignored(problems: string[]): ParsedContextPolicy {
  return {
    policy: DEFAULT_SPAWN_POLICY,
    warnings: problems.map((p) => `${p} (the default spawn policy applies until it is fixed)`),
  };
}
