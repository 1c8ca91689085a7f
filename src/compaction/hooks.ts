import type { CompactionOutcome } from './types';
/**
 * `before_compaction` / `after_compaction` hooks (OpenClaw). Compaction activities emit them: once
 * when a compaction's row is first recorded, once when the row leaves `running` as a success.
 * A hook that throws is reported, never fails the compaction (hooks observe; they do not decide).
 */

/** What a hook learns when a compaction starts. */
export interface BeforeCompactionEvent {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  readonly compactionId: string;
  readonly trigger: string;
}

/** What a hook learns when a compaction has been recorded. */
export interface AfterCompactionEvent extends BeforeCompactionEvent, CompactionOutcome {}

export interface CompactionHookEvents {
  before_compaction: BeforeCompactionEvent;
  after_compaction: AfterCompactionEvent;
}

export type CompactionHookName = keyof CompactionHookEvents;
export type CompactionHook<N extends CompactionHookName> = (event: CompactionHookEvents[N]) => void | Promise<void>;

/** A hook that threw, by name. */
export interface CompactionHookError {
  readonly hook: CompactionHookName;
  readonly error: unknown;
}

/**
 * A small registry of compaction hooks, run in registration order.
 *
 * @example
 *   const hooks = new CompactionHooks().on('after_compaction', (e) => audit(e.compactionId));
 */
export class CompactionHooks {
  private readonly hooks: { [N in CompactionHookName]: Array<CompactionHook<N>> } = {
    before_compaction: [],
    after_compaction: [],
  };

  /** Registers a hook; returns the registry for chaining. */
  on<N extends CompactionHookName>(name: N, hook: CompactionHook<N>): this {
    (this.hooks[name] as Array<CompactionHook<N>>).push(hook);
    return this;
  }

  /** Runs every hook of `name`; returns the errors of those that threw (empty when all ran). */
  async emit<N extends CompactionHookName>(name: N, event: CompactionHookEvents[N]): Promise<CompactionHookError[]> {
    const errors: CompactionHookError[] = [];
    for (const hook of this.hooks[name] as Array<CompactionHook<N>>) {
      try {
        await hook(event);
      } catch (error) {
        errors.push({ hook: name, error });
      }
    }
    return errors;
  }
}
