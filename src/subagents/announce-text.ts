/**
 * What a parent reads when a child finishes: one bounded entry (about 500 tokens) with a pointer to
 * the child's full transcript, so the parent's context pays for the result, not the investigation.
 */
import { DEFAULTS } from '../config/defaults';

export type SubagentOutcome = 'done' | 'failed' | 'killed';

export interface AnnounceFacts {
  readonly subagentId: string;
  readonly label: string | null;
  readonly childSessionKey: string;
  readonly mode: string;
  readonly outcome: SubagentOutcome;
  /** The child's final reply, or why it failed or was killed. */
  readonly text: string;
}

/** The announce entry's text; the result part is cut at the bound with a note saying where the rest is. */
export function announceText(f: AnnounceFacts): string {
  const name = f.label ? `"${f.label}" (${f.subagentId})` : f.subagentId;
  const head = `[Subagent ${name} ${headline(f.outcome)} · mode ${f.mode}]`;
  const body = f.text.trim() === '' ? '(no reply text)' : f.text.trim();
  const limit = DEFAULTS.subagentAnnounceChars;
  const result = body.length > limit ? `${body.slice(0, limit)}… [${body.length - limit} more characters in the child's transcript]` : body;
  const pointer = `Full transcript: sessions_history with sessionKey "${f.childSessionKey}".`;
  const next = f.mode === 'session' && f.outcome !== 'killed' ? ' It stays available: sessions_send steers it with another message.' : '';
  return `${head}\n${result}\n${pointer}${next}`;
}

function headline(outcome: SubagentOutcome): string {
  if (outcome === 'done') return 'finished';
  if (outcome === 'failed') return 'failed';
  return 'was killed';
}
