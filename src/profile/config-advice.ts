/**
 * Current vs recommended context settings for a session's work style:
 * the four settings that matter, plus the engine they need. What is already right comes first, then
 * only what differs, each with what it does in practice. Pure: `keel profile` prints it and a report
 * can show the same lines.
 */
import { DEFAULTS } from '../config/defaults';
import type { KeelConfig } from '../config/keel-config';
import { effectiveReserveTokens, resolveReserveTokens } from '../context/context-window';
import { formatDuration, WORK_STYLE_PRESETS, type WorkStyle } from '../context/work-style-presets';

/** The settings an agent runs with now, as they act (the reserve after its floor). */
export interface CurrentSettings {
  readonly contextEngine: string;
  readonly reserveTokens: number;
  /** Undefined: old tool output is never cleared for being idle. */
  readonly pruningTtl?: number;
  readonly keepLastAssistants: number;
  readonly minPrunableToolChars: number;
  readonly workStyle?: WorkStyle;
}

export type SettingKey =
  'contextEngine' | 'reserveTokens' | 'pruningTtl' | 'keepLastAssistants' | 'minPrunableToolChars';

export interface SettingAdvice {
  readonly key: SettingKey;
  /** The setting in plain words. */
  readonly setting: string;
  readonly current: string | number | null;
  readonly recommended: string | number;
  readonly right: boolean;
  /** What the recommended value does in practice. */
  readonly inPractice: string;
}

export interface ConfigAdvice {
  readonly style: WorkStyle;
  /** Settings already as the style recommends. */
  readonly right: SettingAdvice[];
  /** Settings that differ, in the order of the work-style presets' settings. */
  readonly changes: SettingAdvice[];
}

/** What an agent's config resolves to for the four settings. */
export function currentSettings(
  config: Pick<KeelConfig, 'contextEngine' | 'reserveTokens' | 'contextEngineOptions' | 'workStyle'> & {
    readonly reserveTokensFloor?: number;
  },
): CurrentSettings {
  const options = config.contextEngineOptions ?? {};
  return {
    contextEngine: config.contextEngine,
    reserveTokens: resolveReserveTokens(config),
    ...(options.pruningTtl !== undefined ? { pruningTtl: options.pruningTtl } : {}),
    keepLastAssistants: options.keepLastAssistants ?? DEFAULTS.keepLastAssistants,
    minPrunableToolChars: options.minPrunableToolChars ?? DEFAULTS.minPrunableToolChars,
    ...(config.workStyle ? { workStyle: config.workStyle } : {}),
  };
}

// Reserves here are resolved already (floor applied): only the half-window cap is left to apply.
const capped = (window: number, reserve: number) => effectiveReserveTokens(window, reserve, 0);
const fullAt = (window: number, reserve: number) => Math.round(((window - capped(window, reserve)) / window) * 100);
const exchanges = (n: number) => (n === 1 ? 'only the last exchange keeps its' : `the last ${n} exchanges keep their`);
/** 60000 → "1 minute", 90000 → "90 seconds". */
const spoken = (ms: number) =>
  ms % 60_000 === 0 ? `${ms / 60_000} minute${ms === 60_000 ? '' : 's'}` : `${Math.round(ms / 1_000)} seconds`;

/** Compares the agent's settings with the style's preset; `window` is the agent's context window. */
export function adviseSettings(current: CurrentSettings, style: WorkStyle, window: number): ConfigAdvice {
  const preset = WORK_STYLE_PRESETS[style];
  const all: SettingAdvice[] = [];
  if (current.contextEngine === 'legacy') {
    all.push({
      key: 'contextEngine',
      setting: 'Which engine assembles the context',
      current: 'legacy',
      recommended: 'budgeted',
      right: false,
      inPractice:
        'the clean-up settings below act only in the budgeted engine; legacy sends every old tool result in full until compaction',
    });
  }
  // The reserve never takes more than half the window: on a small window the preset's is capped there
  // (a reserve above the window would not load), and two values can act the same.
  const reserve = Math.min(preset.reserveTokens, Math.floor(window * DEFAULTS.maxReserveWindowShare));
  const sameReserve = capped(window, current.reserveTokens) === capped(window, reserve);
  all.push({
    key: 'reserveTokens',
    setting: 'When to compress the conversation',
    current: current.reserveTokens,
    recommended: reserve,
    right: sameReserve,
    inPractice: sameReserve
      ? `compaction starts at about ${fullAt(window, reserve)}% of the ${window.toLocaleString('en-US')}-token window`
      : `compaction starts at about ${fullAt(window, reserve)}% full instead of ${fullAt(window, current.reserveTokens)}%: ${reserve > current.reserveTokens ? 'sooner, so a shorter summary and more room left after it' : 'later, so more history stays verbatim before it is summarised'}`,
  });
  const ttl = formatDuration(preset.pruningTtl);
  all.push({
    key: 'pruningTtl',
    setting: 'How quickly old tool output is cleared',
    current: current.pruningTtl === undefined ? null : formatDuration(current.pruningTtl),
    recommended: ttl,
    right: current.pruningTtl === preset.pruningTtl,
    inPractice: `after ${spoken(preset.pruningTtl)} without a turn, old command output, file reads and search results are replaced by a short note${current.pruningTtl === undefined ? ' (now they are never cleared for being idle)' : preset.pruningTtl < current.pruningTtl ? ' (cleans up sooner; the agent may need to re-read a file)' : preset.pruningTtl > current.pruningTtl ? ' (fires less often during active work)' : ''}`,
  });
  all.push({
    key: 'keepLastAssistants',
    setting: 'How many recent exchanges are protected from cleanup',
    current: current.keepLastAssistants,
    recommended: preset.keepLastAssistants,
    right: current.keepLastAssistants === preset.keepLastAssistants,
    inPractice: `${exchanges(preset.keepLastAssistants)} tool output untouched${preset.keepLastAssistants < current.keepLastAssistants ? ' (more aggressive cleanup)' : preset.keepLastAssistants > current.keepLastAssistants ? ' (more recent history stays visible)' : ''}`,
  });
  all.push({
    key: 'minPrunableToolChars',
    setting: 'Minimum size before tool output gets trimmed',
    current: current.minPrunableToolChars,
    recommended: preset.minPrunableToolChars,
    right: current.minPrunableToolChars === preset.minPrunableToolChars,
    inPractice: `only tool results over ${preset.minPrunableToolChars.toLocaleString('en-US')} characters can be cleared${preset.minPrunableToolChars < current.minPrunableToolChars ? ' (medium outputs too, not only very large ones)' : preset.minPrunableToolChars > current.minPrunableToolChars ? ' (only very large outputs)' : ''}`,
  });
  return { style, right: all.filter((a) => a.right), changes: all.filter((a) => !a.right) };
}

const shown = (v: string | number | null) => (v === null ? 'off' : String(v));

/** The advice as a compact list: what is right first, then each change with old → new and what it does. */
export function adviceLines(advice: ConfigAdvice): string[] {
  const preset = WORK_STYLE_PRESETS[advice.style];
  const lines: string[] = [];
  if (advice.right.length > 0) {
    lines.push('Already right:');
    for (const a of advice.right) lines.push(`  ✓ ${a.setting} (${a.key} ${shown(a.current)}): ${a.inPractice}`);
  }
  if (advice.changes.length === 0) {
    lines.push(`Nothing to change: the settings match ${advice.style} work (${preset.suits}).`);
    return lines;
  }
  lines.push(`Recommended for ${advice.style} work (${preset.suits}):`);
  for (const a of advice.changes)
    lines.push(`  • ${a.setting}: ${a.key} ${shown(a.current)} → ${shown(a.recommended)}: ${a.inPractice}`);
  return lines;
}
