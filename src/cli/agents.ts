import type { Kysely } from 'kysely';
import type { Database } from '../store/schema';
import { agentConfig, describeAgents, type AgentSummary, type KeelSettings } from '../config/agent-config';
import { sessionModel, type SessionModelInput, type SessionModelReport } from '../operations/sessions/session-model';
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

/** `keel session model <key> [<model> | --clear]`: the session's model (`sessionModel`), a line on stderr unless --json. */
export async function sessionModelCommand(
  db: Kysely<Database>,
  settings: KeelSettings,
  opts: SessionModelInput & { readonly json: boolean },
): Promise<SessionModelReport> {
  const report = await sessionModel({ db, settings }, opts);
  if (!opts.json)
    stderr(
      `${shownKey(report.sessionKey)}: ${report.model}${report.override ? ' (session override)' : ` (agent ${report.agentId}'s model)`}\n`,
    );
  return report;
}
