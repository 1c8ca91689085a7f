/**
 * The fixed texts and small decisions of the system prompt (OpenClaw's system prompt sections):
 * which mode a session gets, the standing guidance, the runtime line and the post-compaction memory.
 */
import { parseSessionKey } from '../sessions/session-key';
import { SILENT_REPLY_TOKEN } from './silent-reply';
import type { PromptMode } from './system-prompt';

/**
 * Main sessions use the configured mode; subagent, cron and hook sessions get `minimal` (they run a
 * task, not a conversation), unless the configured mode is `none`.
 */
export function promptModeFor(sessionKey: string, configured: PromptMode): PromptMode {
  if (configured === 'none') return 'none';
  const kind = parseSessionKey(sessionKey).kind;
  return kind === 'subagent' || kind === 'cron' || kind === 'hook' ? 'minimal' : configured;
}

export const TOOL_CALL_STYLE = [
  'Call a tool when it answers better than guessing; do not narrate routine tool calls.',
  'Pass the inputs each tool asks for; when a call fails, read its error and fix the input instead of repeating it.',
].join('\n');

export const SAFETY = [
  'Do not pursue goals beyond the task you were given, and do not try to gain access, resources or persistence you were not granted.',
  'Ask before actions that are destructive, irreversible or that reach other people, and stop when asked to stop.',
].join('\n');

export const MEMORY_RECALL = [
  'MEMORY.md holds long-term memory; memory/YYYY-MM-DD.md holds the daily logs (today and yesterday are shown under Workspace).',
  'Before answering about earlier work, decisions, people or preferences, use memory_search; it searches the saved notes and every daily log and returns matching notes with their dates.',
  'After a compaction, or when the user refers to something earlier that is not in your context, use history_search to find it in the full history and history_expand (the compaction id a summary names, or an entry id) to read it.',
].join('\n');

export const MESSAGING = [
  `Reply with exactly ${SILENT_REPLY_TOKEN} when nothing should be delivered (housekeeping, nothing to add); it must be the whole reply.`,
  `Never add ${SILENT_REPLY_TOKEN} to a real answer.`,
].join('\n');

/**
 * The runtime line. It names the date, not the time, so the system prompt stays byte-identical
 * through the day and the provider's prompt cache keeps hitting.
 */
export function runtimeSection(model: string, now: Date, timeZone: string): string {
  return `Model: ${model}\nDate: ${localDate(now, timeZone)} (${weekday(now, timeZone)}), time zone ${timeZone}`;
}

/** YYYY-MM-DD of `now` in `timeZone`. */
export function localDate(now: Date, timeZone: string): string {
  // en-CA formats dates as YYYY-MM-DD.
  return formatter('en-CA', timeZone, { year: 'numeric', month: '2-digit', day: '2-digit' }).format(now);
}

function weekday(now: Date, timeZone: string): string {
  return formatter('en-US', timeZone, { weekday: 'long' }).format(now);
}

/** Formatters by locale and zone: building one costs more than the rest of the system prompt (every model call). */
const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(locale: string, timeZone: string, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const key = `${locale} ${timeZone} ${Object.keys(options).join(',')}`;
  let f = formatters.get(key);
  if (!f) formatters.set(key, (f = new Intl.DateTimeFormat(locale, { timeZone, ...options })));
  return f;
}

/** The daily logs in the prompt: yesterday's and today's, as workspace-relative paths (dates in `timeZone`). */
export function dailyLogPaths(now: Date, timeZone: string): string[] {
  const today = localDate(now, timeZone);
  // Noon of the local date minus a day is yesterday whatever the offset or DST change.
  const yesterday = localDate(new Date(Date.parse(`${today}T12:00:00Z`) - 86_400_000), 'UTC');
  return [`memory/${yesterday}.md`, `memory/${today}.md`];
}

/** What the flush saved as the structured checkpoint (`memory_checkpoint`). */
export interface MemoryCheckpoint {
  readonly currentTask?: string;
  readonly keyState?: string;
  readonly decisions?: readonly string[];
  readonly filesChanged?: readonly string[];
  readonly nextSteps?: readonly string[];
}

/**
 * The post-compaction memory text: the checkpoint the flush saved before the compaction, and where
 * the flush's notes went. Empty when nothing was saved.
 */
export function postCompactionMemory(input: {
  checkpoint?: MemoryCheckpoint;
  notesDay?: string;
  notesInWorkspace?: boolean;
}): string {
  const lines: string[] = [];
  if (input.notesDay) {
    const where = input.notesInWorkspace
      ? `are in memory/${input.notesDay}.md and found by memory_search`
      : `(${input.notesDay}) are found by memory_search`;
    lines.push(`The conversation was compacted. Notes you saved before it ${where}.`);
  }
  const c = input.checkpoint;
  if (c) {
    lines.push('Checkpoint saved before the compaction:');
    if (c.currentTask) lines.push(`- Current task: ${c.currentTask}`);
    if (c.keyState) lines.push(`- Key state: ${c.keyState}`);
    const list = (title: string, items: readonly string[] | undefined) => {
      if (items && items.length > 0) lines.push(`- ${title}: ${items.join('; ')}`);
    };
    list('Decisions', c.decisions);
    list('Files changed', c.filesChanged);
    list('Next steps', c.nextSteps);
  }
  return lines.join('\n');
}
