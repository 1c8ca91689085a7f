/** `keel sessions`: the listing as people read it (the listing itself is the sessions operation's). */
import type { SessionListing } from '../operations/sessions/session-views';
import { shownKey } from '../operations/shown-key';
import { contextBar } from './context-bar';

/** Two lines per session on stderr: who and when, then the usage bar. */
export function renderSessions(sessions: readonly SessionListing[], write: (text: string) => void): void {
  if (sessions.length === 0) {
    write('no sessions (send a message, or keel import an OpenClaw sessions folder)\n');
    return;
  }
  for (const s of sessions) {
    write(
      `${shownKey(s.sessionKey)}  agent ${s.agentId}  session ${s.sessionId}  updated ${s.updatedAt.slice(0, 19).replace('T', ' ')}\n`,
    );
    write(
      `  ${contextBar(s)} · turns ${s.turns} · compactions ${s.compactions} · model ${s.model}${s.modelOverride ? ' (override)' : ''}${s.earlierSessionIds > 0 ? ` · ${s.earlierSessionIds} earlier session ids (keel export --all)` : ''}${s.autoCompactionPaused ? ' · auto-compaction PAUSED (keel compactions --failed)' : ''}\n`,
    );
    if (s.estimateScale !== undefined) {
      write(
        `  window ${Math.round(s.estimateScale * 100)}% of the model's: the provider counts this session's content denser than Keel's estimate (a large reply measured lighter, or /new, restores it)\n`,
      );
    }
  }
  write(`${sessions.length} session${sessions.length === 1 ? '' : 's'}\n`);
}
