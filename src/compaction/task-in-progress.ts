/**
 * The compaction summary's "Task in progress" section: when a compaction inside a running turn
 * summarizes the message that started the turn, the summary carries that message verbatim, so a long
 * run compacted again and again never loses what it was asked to do. Written fresh at every
 * compaction from the stored message (the previous one's copy is stripped before re-summarizing).
 */

export const TASK_IN_PROGRESS_HEADING = '## Task in progress (verbatim)';
const OPEN = '<task>';
const CLOSE = '</task>';

/** Characters of the task the section keeps; the rest is named, and `history_expand` brings it back. */
const TASK_CHARS = 8_000;

/** `summary` without its "Task in progress" section. */
export function withoutTaskInProgress(summary: string): string {
  const start = summary.indexOf(TASK_IN_PROGRESS_HEADING);
  if (start < 0) return summary;
  const close = summary.indexOf(CLOSE, start);
  const end = close < 0 ? summary.length : close + CLOSE.length;
  return `${summary.slice(0, start).trimEnd()}${summary.slice(end).trimEnd() ? `\n\n${summary.slice(end).trim()}` : ''}`;
}

/** `summary` with the running turn's task at its end (the section alone replaced when there is none). */
export function withTaskInProgress(summary: string, task: string | undefined): string {
  const base = withoutTaskInProgress(summary).trimEnd();
  if (task === undefined) return base;
  const kept =
    task.length <= TASK_CHARS
      ? task
      : `${task.slice(0, TASK_CHARS)}… (${task.length - TASK_CHARS} more characters in the stored message)`;
  const section = [
    TASK_IN_PROGRESS_HEADING,
    'The message that started the turn still running; the work summarized above is toward it.',
    OPEN,
    kept.replaceAll(CLOSE, '</ task>'),
    CLOSE,
  ].join('\n');
  return `${base}\n\n${section}`;
}
