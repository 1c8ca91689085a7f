/**
 * The advice a replay report shows: the replayed conversation profiled the way `keel profile`
 * profiles a stored session (work style, evidence, what eats the context, settings that differ), so
 * the report says what to try next beside what each policy did.
 */
import type { KeelConfig } from '../config/keel-config';
import { configuredWindow } from '../config/configured-window';
import { DEFAULTS } from '../config/defaults';
import { messageProfileEntry } from '../profile/profile-entries';
import { profileLines, profileSession } from '../profile/session-profile';
import type { ReplayTranscript } from './replay-source';

export function replayAdvice(transcript: ReplayTranscript, agentId: string, config: KeelConfig): string[] {
  const tokensOf = (text: string) => Math.ceil(text.length / DEFAULTS.charsPerToken);
  const entries = transcript.entries.map((e) => messageProfileEntry(e.id, e.message, 0, tokensOf(JSON.stringify(e.message.content))));
  const profile = profileSession({
    agentId,
    sessionKey: transcript.sessionKey ?? transcript.source,
    sessionId: '',
    entries,
    config,
    window: configuredWindow(config).tokens,
  });
  return profileLines(profile);
}
