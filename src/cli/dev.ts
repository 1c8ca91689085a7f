import { createInterface } from 'node:readline/promises';
import type { SessionStatus } from '../protocol';
import { loadKeelSettings } from '../config/agent-config';
import { validateStartup } from '../config/validate-startup';
import { agentConfig } from '../config/agent-config';
import { parseSessionKey } from '../sessions/session-key';
import { modelConfigured } from '../runtime/activity-deps';
import type { StartLocalStack } from './local-stack';
import { contextBar, contextSplitBar } from './context-bar';

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

async function chat(client: import('../client/keel-client').KeelClient, sessionKey: string, log: (l: string) => void): Promise<void> {
  log(`chat: session ${sessionKey}. Type a message; /status shows context usage; /quit or Ctrl-D leaves.`);
  // Usage, then what it is made of (system prompt, workspace files, tools, history).
  const logStatus = (status: SessionStatus) => {
    log(contextBar(status));
    if (status.contextSplit) log(contextSplitBar(status.contextSplit, status.contextWindow));
  };
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    for (;;) {
      let line: string;
      try {
        line = (await rl.question('you › ')).trim();
      } catch {
        return; // stdin closed
      }
      if (!line) continue;
      if (line === '/quit' || line === '/exit') return;
      if (line === '/status') {
        logStatus(await client.getStatus(sessionKey));
        continue;
      }
      try {
        const result = await client.sendMessage(sessionKey, line);
        process.stdout.write(`keel › ${result.silent ? '(no reply)' : result.reply}\n`);
        logStatus(await client.getStatus(sessionKey));
      } catch (err) {
        log(`turn failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  } finally {
    rl.close();
  }
}
