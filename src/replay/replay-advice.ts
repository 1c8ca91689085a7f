/**
 * The advice a replay report shows: the replayed conversation profiled the way `keel profile`
 * profiles a stored session (work style, evidence, what eats the context, settings that differ), so
 * the report says what to try next beside what each policy did.
 */
import type { KeelConfig } from '../config/keel-config';
import { configuredWindow } from '../config/configured-window';
import { boundedEstimate } from '../runtime/bounded-estimate';
import { messageProfileEntry } from '../profile/profile-entries';
import { profileLines, profileSession } from '../profile/session-profile';
import type { ReplayTranscript } from './replay-source';

/**
 * The advice as lines the way `keel profile` prints them: headings flush left, their items indented
 * with their own marker (`- `, `✓ `, `• `). Renderers show the lines as given, adding no bullets.
 */
export function replayAdvice(transcript: ReplayTranscript, agentId: string, config: KeelConfig): string[] {
  const entries = transcript.entries.map((e) => messageProfileEntry(e.id, e.message, 0, boundedEstimate(e.message)));
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

/** One heading of the advice and the items under it, markers stripped (for an HTML list). */
export interface AdviceSection {
  readonly heading: string;
  readonly items: readonly string[];
}

const ITEM = /^\s+(?:[-•✓]\s+)?/;

/** Advice lines as headings with their items: an indented line belongs to the heading above it. */
export function adviceSections(lines: readonly string[]): AdviceSection[] {
  const sections: Array<{ heading: string; items: string[] }> = [];
  for (const line of lines) {
    const last = sections.at(-1);
    if (ITEM.test(line) && last) last.items.push(line.replace(ITEM, ''));
    else sections.push({ heading: line.trim(), items: [] });
  }
  return sections;
}
