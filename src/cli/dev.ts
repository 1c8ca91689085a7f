import { configFromEnv } from '../config/keel-config';
import { validateStartup } from '../config/validate-startup';
import { modelConfigured } from '../runtime/activity-deps';
import { startLocalStack } from './stack';
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
export async function runDev(opts: DevOptions): Promise<number> {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const config = configFromEnv();
  // Without a model dev still starts the stack, then says how to set one.
  await validateStartup(config, { toolsModule: process.env.KEEL_TOOLS_MODULE, requireModel: false });
  const stack = await startLocalStack(config, log);
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
