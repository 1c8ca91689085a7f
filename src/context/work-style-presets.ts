/**
 * The work-style presets (recommended combinations by work style): the four settings
 * that decide how a session's context is kept small. The one table `workStyle` in the config file,
 * `keel profile` and `keel replay` read, so a recommendation and the preset it names never drift.
 */

export const WORK_STYLES = ['tool-heavy', 'conversational', 'mixed', 'bursty'] as const;
export type WorkStyle = (typeof WORK_STYLES)[number];

/** The four settings that matter , in Keel's config names. */
export interface ContextSettings {
  /** When to compress: the reserve kept free; compaction runs once the context reaches window − reserve. */
  readonly reserveTokens: number;
  /** How quickly old tool output is cleared: after this long without a turn (milliseconds). */
  readonly pruningTtl: number;
  /** How many recent exchanges are protected from clearing. */
  readonly keepLastAssistants: number;
  /** Only tool results longer than this (characters) are cleared. */
  readonly minPrunableToolChars: number;
}

export interface WorkStylePreset extends ContextSettings {
  readonly style: WorkStyle;
  /** What kind of work it suits, in words a person picks a style by. */
  readonly suits: string;
}

const minute = 60_000;

export const WORK_STYLE_PRESETS: Readonly<Record<WorkStyle, WorkStylePreset>> = {
  'tool-heavy': {
    style: 'tool-heavy',
    suits: 'audits, tests, debugging',
    reserveTokens: 60_000,
    pruningTtl: 1 * minute,
    keepLastAssistants: 1,
    minPrunableToolChars: 10_000,
  },
  conversational: {
    style: 'conversational',
    suits: 'planning, discussion',
    reserveTokens: 30_000,
    pruningTtl: 5 * minute,
    keepLastAssistants: 3,
    minPrunableToolChars: 50_000,
  },
  mixed: {
    style: 'mixed',
    suits: 'code → test → discuss',
    reserveTokens: 50_000,
    pruningTtl: 2 * minute,
    keepLastAssistants: 2,
    minPrunableToolChars: 10_000,
  },
  bursty: {
    style: 'bursty',
    suits: 'monitoring + incidents',
    reserveTokens: 50_000,
    pruningTtl: 2 * minute,
    keepLastAssistants: 1,
    minPrunableToolChars: 10_000,
  },
};

/** "90s", "2m", "1h" or a number of milliseconds → milliseconds; anything else is returned as is for zod to reject. */
export function parseDuration(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)\s*$/i.exec(value);
  if (!m) return value;
  const unit = { ms: 1, s: 1_000, m: minute, h: 60 * minute }[m[2]!.toLowerCase() as 'ms'];
  return Math.round(Number(m[1]) * unit);
}

/** Milliseconds as the config file writes them: "2m", "90s", "1h". */
export function formatDuration(ms: number): string {
  if (ms % (60 * minute) === 0 && ms > 0) return `${ms / (60 * minute)}h`;
  if (ms % minute === 0 && ms > 0) return `${ms / minute}m`;
  if (ms % 1_000 === 0) return `${ms / 1_000}s`;
  return `${ms}ms`;
}
