import { InvalidArgumentError } from 'commander';
import { z } from 'zod';
import { loadKeelSettings } from '../../config/agent-config';
import { atRestFor, storeTargetFor, type Store } from '../../store/connect';
import { openReachableStore } from '../../store/reachable-store';
import { agentNotAllowed } from '../../security/allowed-agents';
import { UsageError } from '../connect';
import type { CliRoots } from '../local-stack';

/** What every command group gets: the composition roots and a way to set the exit code. */
export interface CliContext {
  readonly roots: CliRoots;
  /** The process exits with this once the command's action returns (0 unless a command says otherwise). */
  exitCode: number;
}

/** Options every data command takes. */
export interface JsonOption {
  readonly json?: boolean;
}

/** The agent of commands that take an id and no session key (`--agent` overrides), as session keys without one default to. */
export const DEFAULT_CLI_AGENT = 'main';

/** `--json` prints the command's one result object on stdout; everything else goes to stderr. */
export function printResult(opts: JsonOption, result: unknown): void {
  if (opts.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}

/** People-text: always stderr. */
export const say = (text: string): void => void process.stderr.write(text.endsWith('\n') ? text : `${text}\n`);

/** The environment over keel.config.json's top level: what commands without an agent use. */
export const configFromEnv = () => loadKeelSettings().defaults;

/** The `--agent` of a command, refused (before anything is read or sent) when KEEL_ALLOWED_AGENTS leaves it out. */
export function allowedAgent(agentId: string): string {
  const refusal = agentNotAllowed(configFromEnv().allowedAgents, agentId);
  if (refusal) throw new UsageError(refusal);
  return agentId;
}

/** Opens the configured store; an unreachable PostgreSQL is named with DATABASE_URL and the address tried. */
export async function openConfiguredStore(): Promise<Store> {
  const config = configFromEnv();
  const target = storeTargetFor(config);
  // The key ring opens what was sealed at rest: export, doctor and compactions show read plaintext.
  return openReachableStore(target, { atRest: atRestFor(config) });
}

export async function withStore<T>(fn: (store: Store) => Promise<T>): Promise<T> {
  const store = await openConfiguredStore();
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** An option parser for a whole number ≥ 0; a bad value is a usage error naming the flag. */
export function countOf(flag: string): (value: string) => number {
  const schema = z.coerce
    .number({ message: `${flag} must be a number` })
    .int(`${flag} must be a whole number`)
    .nonnegative(`${flag} must be ≥ 0`);
  return (value) => {
    const parsed = schema.safeParse(value);
    if (!parsed.success) throw new InvalidArgumentError(parsed.error.issues[0]!.message);
    return parsed.data;
  };
}
