/**
 * `<package>/worker`: run a Keel worker in your own process, with your tools, config and context
 * engines. `runKeelWorker` is the whole worker process (`keel worker`) with tools added in code;
 * `createKeelWorker` with `openRuntime` is the same in parts, for a process that owns its own
 * connections and lifecycle.
 *
 * @example
 *   import { ToolRegistry, registerContextEngine } from 'keel-agents';
 *   import { runKeelWorker } from 'keel-agents/worker';
 *
 *   const tools = new ToolRegistry().register({ name: 'lookup', description: 'Looks a word up', input: z.object({ word: z.string() }), run: async ({ word }) => `${word}: found` });
 *   await runKeelWorker({ tools }); // until SIGINT/SIGTERM; config from the environment and keel.config.json
 */
import { loadKeelSettings, type KeelSettings } from '../src/config/agent-config';
import type { ToolRegistry } from '../src/tools/registry';
import { runWorker } from './run-worker';

export { createKeelWorker, type KeelWorkerOptions } from './create-worker';
export { openRuntime, type OpenRuntimeOptions, type Runtime } from '../src/runtime/activity-deps';

/** What `runKeelWorker` runs with. */
export interface RunKeelWorkerOptions {
  /** Settings (defaults and agents); default `loadKeelSettings()`: the environment over keel.config.json. */
  readonly settings?: KeelSettings;
  /** The tools every agent without a tools module of its own gets (the config's `tools` module registers into it too). */
  readonly tools?: ToolRegistry;
  /** Pretty log lines for people instead of JSON. */
  readonly pretty?: boolean;
}

/**
 * Runs a Keel worker until SIGINT or SIGTERM, then drains in-flight work: its database (DATABASE_URL,
 * else PGlite under KEEL_HOME), the Temporal cluster (TEMPORAL_ADDRESS, namespace, TLS, API key), the
 * task queue and the agents all come from `settings`. Context engines registered with
 * `registerContextEngine` before the call are available to the config.
 */
export function runKeelWorker(options: RunKeelWorkerOptions = {}): Promise<void> {
  return runWorker(options.settings ?? loadKeelSettings(), {
    ...(options.tools ? { tools: options.tools } : {}),
    ...(options.pretty ? { pretty: true } : {}),
  });
}
