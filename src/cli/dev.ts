import { loadKeelSettings, type KeelSettings } from '../config/agent-config';
import type { ServedApi } from '../api/serve-api';
import { serveApiWith } from './serve-command';
import { validateStartup } from '../config/validate-startup';
import { agentConfig } from '../config/agent-config';
import { parseSessionKey } from '../sessions/session-key';
import { modelConfigured } from '../runtime/activity-deps';
import type { LocalStack, StartLocalStack } from './local-stack';
import { chat } from './chat';
import { sessionThinking } from '../operations/sessions/session-thinking';
import { checkModel } from './check-model';
import { smallWindowOf, smallWindowText } from './small-window-note';

/** How long stopping the stack may take before what is left is killed: `keel dev` ends within seconds. */
const STOP_DEADLINE_MS = 8_000;

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
  // Whatever ends this process (a crash included), the dev server and stack.json go with it.
  const killOnExit = () => stack.kill();
  process.on('exit', killOnExit);
  const config = agentConfig(settings, agentOf(opts.sessionKey));
  log(`temporal: ${stack.temporalAddress}${stack.uiUrl ? ` (Web UI ${stack.uiUrl})` : ''}`);
  const small = smallWindowOf(config);
  if (small) log(`${agentOf(opts.sessionKey)}: ${smallWindowText(small)}`);
  const api = await startDevApi(stack, settings, log);
  try {
    if (!modelConfigured(config)) {
      log(HOW_TO_SET_A_MODEL);
      return 0;
    }
    if (opts.check) {
      const failure = await checkModel(config);
      log(
        failure
          ? `check: the model did not answer: ${failure}`
          : `check: stack started; the model (${config.model}) answered; stopping`,
      );
      return failure ? 1 : 0;
    }
    if (stack.logFile) log(`worker logs: ${stack.logFile}`);
    await chat(stack.client, opts.sessionKey, log, {
      sessionThinking: (level) =>
        sessionThinking(stack.runtime.store.db, settings, {
          agentId: agentOf(opts.sessionKey),
          sessionKey: opts.sessionKey,
          ...(level !== undefined ? { level } : {}),
        }),
    });
    return 0;
  } finally {
    await api
      ?.close()
      .catch((err: unknown) => log(`stopping the HTTP API: ${err instanceof Error ? err.message : String(err)}`));
    await stopWithin(stack, STOP_DEADLINE_MS, log);
    process.off('exit', killOnExit);
  }
}

/**
 * The HTTP API beside the chat, on the stack's client (its replies stream) and store. A port in use
 * or a refused binding is said and the chat starts without it: the chat is what `keel dev` is for.
 */
async function startDevApi(
  stack: LocalStack,
  settings: KeelSettings,
  log: (line: string) => void,
): Promise<ServedApi | undefined> {
  try {
    const api = await serveApiWith(stack.client, stack.runtime.store, settings, stack.temporalAddress, stack.logger);
    log(`api: ${api.url} (keel serve's HTTP API; GET /openapi.json describes it)`);
    log(
      `console: ${api.url}/ (sessions, context, compactions, transcripts; ${settings.defaults.apiToken ? 'log in with KEEL_API_TOKEN' : 'no login on this machine: KEEL_API_TOKEN is not set'})`,
    );
    return api;
  } catch (err) {
    log(`api: not started: ${err instanceof Error ? err.message : String(err)}`);
    return undefined;
  }
}

/**
 * Stops the stack in order (chat first, then worker, PGlite server, Temporal dev server); past the
 * deadline, what is left is killed and the stack's files removed. Ctrl-C meanwhile changes nothing:
 * the stop is already on its way, and the terminal's Ctrl-C must not end this process half-way. A
 * call the chat abandoned (a turn still in flight) fails once its connection closes; that failure
 * is said on one line, never allowed to end the process before its dev server is stopped.
 */
async function stopWithin(stack: LocalStack, deadlineMs: number, log: (line: string) => void): Promise<void> {
  const patience = () => log('stopping…');
  process.on('SIGINT', patience);
  const closedUnderneath = (reason: unknown) =>
    log(
      `stopping: a call still in flight ended with the connection: ${reason instanceof Error ? reason.message : String(reason)}`,
    );
  process.on('unhandledRejection', closedUnderneath);
  process.on('uncaughtException', closedUnderneath);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), deadlineMs)));
  try {
    if ((await Promise.race([stack.stop().then(() => 'stopped' as const), late])) === 'late') {
      stack.kill();
      log(`stopped by force after ${deadlineMs / 1000} s`);
    } else log('stopped cleanly');
  } finally {
    clearTimeout(timer);
    process.off('SIGINT', patience);
  }
}

/** The agent a session key names (`main` for keys that name none, as the client does). */
function agentOf(sessionKey: string): string {
  return parseSessionKey(sessionKey).agentId ?? 'main';
}
