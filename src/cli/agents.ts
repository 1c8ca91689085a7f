import type { Kysely } from 'kysely';
import type { Database } from '../store/schema';
import { agentConfig, describeAgents, type AgentSummary, type KeelSettings } from '../config/agent-config';
import { getSession, setModelOverride } from '../store/sessions-repo';
import { parseSessionKey } from '../sessions/session-key';
import { UnknownSessionError } from '../operations/errors';
import { shownKey } from '../operations/shown-key';
import { smallWindowOf, smallWindowText, type SmallWindow } from './small-window-note';

const stderr = (text: string) => void process.stderr.write(text);

/** What `keel agents` prints: the config file read and what each agent resolves to. */
export interface AgentsReport {
  readonly file: string | null;
  readonly agents: AgentSummary[];
  /** Agents whose window is too small for a model summary (their compactions are extractive), by agent id (`*`: the defaults). */
  readonly smallWindows: Record<string, SmallWindow>;
}

/** `keel agents`: one line per agent on stderr (unless --json), the report back. */
export function agentsCommand(settings: KeelSettings, json: boolean): AgentsReport {
  const agents = describeAgents(settings);
  const smallWindows: Record<string, SmallWindow> = {};
  for (const a of agents) {
    const small = smallWindowOf(a.configured ? agentConfig(settings, a.agentId) : settings.defaults);
    if (small) smallWindows[a.configured ? a.agentId : '*'] = small;
  }
  const report: AgentsReport = { file: settings.file ?? null, agents, smallWindows };
  if (!json) {
    stderr(
      `${report.file ? `config file ${report.file}` : "no config file (KEEL_CONFIG or ./keel.config.json): every agent runs with the environment's settings"}\n`,
    );
    for (const a of report.agents) {
      const name = a.configured ? a.agentId : '* (any other agent)';
      stderr(
        `${name}\n  model ${a.model} (${a.provider}${a.endpoint ? ` at ${a.endpoint}` : ''})${a.compactionModel ? ` · compaction ${a.compactionModel.model} (${a.compactionModel.provider})` : ''}\n` +
          `  window ${a.contextWindow.tokens} tokens (${a.contextWindow.source}) · reserve ${a.reserveTokens} · soft threshold ${a.softThresholdTokens}\n` +
          `  workspace ${a.workspace ?? 'none'} (${a.workspaceAccess}) · tools ${a.toolsModule ?? 'none'} · engine ${a.contextEngine}${a.workStyle ? ` (${a.workStyle})` : ''} · prompt ${a.promptMode}\n`,
      );
      const small = smallWindows[a.configured ? a.agentId : '*'];
      if (small) stderr(`  ${smallWindowText(small)}\n`);
    }
  }
  return report;
}

/** What `keel session model` prints: the model the session's turns call and whether it is an override. */
export interface SessionModelReport {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly model: string;
  /** The session's own model (null: it follows its agent's). */
  readonly override: string | null;
}

/**
 * `keel session model <key> [<model> | --clear]`: shows, sets or clears the session's model override.
 * The session must exist (a typo never creates one); the next turn uses the change.
 */
export async function sessionModelCommand(
  db: Kysely<Database>,
  settings: KeelSettings,
  opts: { sessionKey: string; model?: string; clear: boolean; defaultAgentId?: string; json: boolean },
): Promise<SessionModelReport> {
  const agentId = parseSessionKey(opts.sessionKey).agentId ?? opts.defaultAgentId ?? 'main';
  const unknown = () =>
    new UnknownSessionError(
      opts.sessionKey,
      `no session ${shownKey(opts.sessionKey)} for agent ${agentId}; send it a message first (nothing was created)`,
    );
  if (opts.model !== undefined || opts.clear) {
    if (!(await setModelOverride(db, agentId, opts.sessionKey, opts.clear ? null : opts.model!))) throw unknown();
  }
  const session = await getSession(db, agentId, opts.sessionKey);
  if (!session) throw unknown();
  const override = session.model_override;
  const report: SessionModelReport = {
    agentId,
    sessionKey: opts.sessionKey,
    model: override ?? agentConfig(settings, agentId).model,
    override,
  };
  if (!opts.json)
    stderr(
      `${shownKey(opts.sessionKey)}: ${report.model}${override ? ' (session override)' : ` (agent ${agentId}'s model)`}\n`,
    );
  return report;
}
