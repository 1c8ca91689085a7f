/**
 * What a parent reads when a child finishes: one bounded entry (about 500 tokens) with a pointer to
 * the child's full transcript, so the parent's context pays for the result, not the investigation.
 */
import { DEFAULTS } from '../config/defaults';

export type SubagentOutcome = 'done' | 'failed' | 'killed';

/** One answer of the run: what it answers (shown when the run has more than one) and its text. */
export interface AnnouncedPart {
  readonly title: string;
  /** The child's reply, or why the request failed or the run was killed. */
  readonly text: string;
}

export interface AnnounceFacts {
  readonly subagentId: string;
  readonly label: string | null;
  readonly childSessionKey: string;
  readonly mode: string;
  readonly outcome: SubagentOutcome;
  /** The run's answers in the order the child gave them: the task's first, then each steer's. */
  readonly parts: readonly AnnouncedPart[];
}

/**
 * The announce entry's text: one run's answers, each cut at its share of the bound with a note
 * saying where the rest is. A run of one answer reads as the answer alone.
 */
export function announceText(f: AnnounceFacts): string {
  const name = f.label ? `"${f.label}" (${f.subagentId})` : f.subagentId;
  const head = `[Subagent ${name} ${headline(f.outcome)} · mode ${f.mode}]`;
  const limit = Math.floor(DEFAULTS.subagentAnnounceChars / Math.max(1, f.parts.length));
  const bodies = f.parts.map((part) => {
    const body = bounded(part.text, limit);
    return f.parts.length === 1 ? body : `${part.title}:\n${body}`;
  });
  const pointer = `Full transcript: sessions_history with sessionKey "${f.childSessionKey}".`;
  const next =
    f.mode === 'session' && f.outcome !== 'killed'
      ? ' It stays available: sessions_send steers it with another message.'
      : '';
  return `${head}\n${bodies.join('\n')}\n${pointer}${next}`;
}

function bounded(text: string, limit: number): string {
  const body = text.trim() === '' ? '(no reply text)' : text.trim();
  return body.length > limit
    ? `${body.slice(0, limit)}… [${body.length - limit} more characters in the child's transcript]`
    : body;
}

function headline(outcome: SubagentOutcome): string {
  if (outcome === 'done') return 'finished';
  if (outcome === 'failed') return 'failed';
  return 'was killed';
}
