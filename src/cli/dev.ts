import { loadKeelSettings } from '../config/agent-config';
import { validateStartup } from '../config/validate-startup';
import { agentConfig } from '../config/agent-config';
import { parseSessionKey } from '../sessions/session-key';
import { modelConfigured } from '../runtime/activity-deps';
import type { StartLocalStack } from './local-stack';
import { chat } from './chat';

const HOW_TO_SET_A_MODEL = [
  'No model is configured, so the chat cannot start. Either:',
  '  export ANTHROPIC_API_KEY=sk-ant-...        # a key from the Anthropic console',
  '  export ANTHROPIC_BASE_URL=http://host:port # or any server speaking the Anthropic Messages API',
  'then run `npm run dev` again. (Optional: KEEL_MODEL=<model id>, default claude-sonnet-4-6.)',
].join('\n');

export interface DevOptions {
  /** Start the stack, check it, stop it, exit 0: a smoke test of a fresh machine. */
  readonly check: boolean;
  readonly sessionKey: string;
}

/** `npm run dev`: the embedded stack plus an interactive chat on one session. */
export async function runDev(opts: DevOptions, startLocalStack: StartLocalStack): Promise<number> {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  // keel.config.json (KEEL_CONFIG) under the environment; the chat's agent runs with its section.
  const settings = loadKeelSettings();
  // Without a model dev still starts the stack, then says how to set one.
  await validateStartup(settings.defaults, { requireModel: false, agents: settings.agents });
  const stack = await startLocalStack(settings, log);
  const config = agentConfig(settings, agentOf(opts.sessionKey));
  log(`temporal: ${stack.temporalAddress}${stack.uiUrl ? ` (Web UI ${stack.uiUrl})` : ''}`);
  try {
    if (!modelConfigured(config)) {
      log(HOW_TO_SET_A_MODEL);
      return 0;
    }
    if (opts.check) {
      log('check: stack started; model configured; stopping');
      return 0;
    }
    await chat(stack.client, opts.sessionKey, log);
    return 0;
  } finally {
    await stack.stop();
    log('stopped cleanly');
  }
}

/** The agent a session key names (`main` for keys that name none, as the client does). */
function agentOf(sessionKey: string): string {
  return parseSessionKey(sessionKey).agentId ?? 'main';
}
