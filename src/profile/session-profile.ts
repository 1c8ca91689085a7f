/**
 * A session's profile: its work style with the
 * evidence, what is eating its context, and current vs recommended settings. Pure: built from the
 * transcript's profile entries and the agent's config, rendered as lines for a terminal or a report.
 */
import type { KeelConfig } from '../config/keel-config';
import { classifySession, type SessionClass } from './classify-session';
import { estimateContext, type ContextEstimate } from './context-estimate';
import type { PromptOverhead } from '../context/context-split';
import { adviceLines, adviseSettings, currentSettings, type ConfigAdvice, type CurrentSettings } from './config-advice';
import type { ProfileEntry } from './profile-entries';

export interface SessionProfile {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  readonly classification: SessionClass;
  readonly estimate: ContextEstimate;
  readonly current: CurrentSettings;
  readonly advice: ConfigAdvice;
}

export interface ProfileInput {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  /** The session's transcript, oldest first. */
  readonly entries: readonly ProfileEntry[];
  readonly config: Pick<
    KeelConfig,
    'contextEngine' | 'reserveTokens' | 'reserveTokensFloor' | 'contextEngineOptions' | 'workStyle'
  >;
  /** The agent's context window in tokens. */
  readonly window: number;
  /** The system prompt, workspace files and tools of the session's last call (its status split), when known. */
  readonly overhead?: PromptOverhead;
}

export function profileSession(input: ProfileInput): SessionProfile {
  const current = currentSettings(input.config);
  const classification = classifySession(input.entries, current.workStyle);
  return {
    agentId: input.agentId,
    sessionKey: input.sessionKey,
    sessionId: input.sessionId,
    classification,
    estimate: estimateContext(input.entries, input.window, input.overhead),
    current,
    advice: adviseSettings(current, classification.style, input.window),
  };
}

const k = (n: number) => (n >= 1_000 ? `${Math.round(n / 100) / 10}k` : String(n));
const CONFIDENCE: Record<SessionClass['confidence'], string> = {
  clear: '',
  borderline: ' (borderline)',
  'little-evidence': ' (few turns: little evidence)',
};

/** The profile as a compact list: pattern and evidence, what is eating the context, then the advice. */
export function profileLines(profile: SessionProfile): string[] {
  const { classification: c, estimate } = profile;
  const lines = [`Pattern: ${c.style}${CONFIDENCE[c.confidence]}`, ...c.reasons.map((r) => `  - ${r}`)];
  lines.push(`What is eating the context (active window, typical ranges; Keel's estimate in brackets):`);
  const b = estimate.baseline;
  lines.push(
    b === 'unknown'
      ? '  - fixed baseline (system prompt, workspace files, tools): unknown, no call of this session reported it (`keel status` shows it once workers answer for the session); not in the total'
      : `  - fixed baseline: ${k(b.systemTokens + b.bootstrapTokens + b.toolTokens)} tokens, as \`keel status\` measures it (system ${k(b.systemTokens)} · workspace ${k(b.bootstrapTokens)} · tools ${k(b.toolTokens)})`,
  );
  for (const p of estimate.parts) {
    if (p.count === 0 || p.part === 'fixed baseline') continue;
    lines.push(
      `  - ${p.count} ${p.part}: ~${k(p.low)}–${k(p.high)} tokens${p.measured !== undefined ? ` [${k(p.measured)}]` : ''}`,
    );
  }
  lines.push(`  total ~${k(estimate.total.low)}–${k(estimate.total.high)} of ${k(estimate.window)} tokens`);
  return [...lines, ...adviceLines(profile.advice)];
}
