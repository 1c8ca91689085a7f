/**
 * The worker's context-engine slot: one engine instance for the worker's lifetime, called at each
 * moment of its lifecycle, and never the reason a turn fails.
 *
 * The contract an engine gets (docs/architecture.md, "The context-engine slot"):
 * - `bootstrap` once per session per worker, the first time the worker prepares a context for it (a
 *   new session, an imported one, or one this worker meets after another worker or a restart), with
 *   the session's active window;
 * - `ingest` (or `ingestBatch`) for every message stored after that, once per worker and in order,
 *   right after a turn's reply is stored (off the reply's path) and at the latest before the next
 *   `assemble`;
 * - `dispose` when the worker drops the session: the least recently used past the slot's session
 *   limit, and every session when the worker stops.
 * Between `bootstrap` and `dispose` an engine may keep what it likes per session; after `dispose`
 * it keeps nothing. Another worker may take the session at any time, so that state must be
 * rebuildable from `bootstrap`.
 *
 * A throwing `assemble` or `compact` falls back to the `legacy` engine for that call; any failure is
 * logged and counted (`keel_context_engine_failures_total`), and the turn goes on.
 */
import { LegacyContextEngine } from './legacy';
import type { AssembleParams, AssembleResult, CompactParams, CompactResult, ContextEngine, SessionRef } from './types';
import type { AgentMessage } from '../context/types';

/** One stored message of a session's window, as the slot hands it to the engine. */
export interface StoredMessage {
  readonly entryId: string;
  readonly seq: number;
  readonly message: AgentMessage;
}

/** The lifecycle calls a slot makes, by name (the `method` label of its failures). */
export type EngineMethod =
  | 'bootstrap'
  | 'ingest'
  | 'assemble'
  | 'afterTurn'
  | 'compact'
  | 'dispose'
  | 'prepareSubagentSpawn'
  | 'onSubagentEnded';

/** What a slot reports to: the worker's log and metrics. */
export interface EngineSlotReporter {
  /** A lifecycle call threw; `fallback` says whether `legacy` answered in its place. */
  failed(engineId: string, method: EngineMethod, err: unknown, fields: { sessionId?: string; fallback: boolean }): void;
  /** A session was disposed to keep the engine under its session limit (it is bootstrapped again on its return). */
  evicted(engineId: string, sessionId: string, maxSessions: number): void;
}

interface SessionState {
  readonly ref: SessionRef;
  /** Messages up to this seq were handed to the engine (bootstrap or ingest). */
  ingestedThroughSeq: number;
  /** The ingest scheduled after a reply; the next call on the session waits for it. */
  pending: Promise<void>;
}

/** A cancelled activity's error is re-thrown, never swallowed as an engine failure. */
function isCancellation(err: unknown): boolean {
  return err instanceof Error && (err.name === 'CancelledFailure' || err.name === 'AbortError');
}

/** The slot around one engine: lifecycle calls at their moments, per-session bookkeeping, fallback. */
export class ContextEngineSlot {
  private readonly fallback = new LegacyContextEngine();
  /** Sessions bootstrapped on this worker, least recently used first. */
  private readonly sessions = new Map<string, SessionState>();

  /**
   * @param maxSessions sessions the engine keeps at once; the least recently used past it is disposed.
   */
  constructor(
    readonly engine: ContextEngine,
    private readonly reporter: EngineSlotReporter,
    private readonly maxSessions: number,
  ) {}

  /** Sessions the engine holds now. */
  get size(): number {
    return this.sessions.size;
  }

  /**
   * Before a context is assembled: bootstraps the session on its first sight (with `window`),
   * otherwise ingests the window's messages the engine has not seen.
   */
  async sync(ref: SessionRef, window: readonly StoredMessage[]): Promise<void> {
    const known = this.sessions.get(ref.sessionId);
    if (known) {
      this.touch(ref.sessionId, known);
      await known.pending;
      await this.ingestNew(known, window);
      return;
    }
    const state: SessionState = { ref, ingestedThroughSeq: lastSeq(window, -1), pending: Promise.resolve() };
    this.sessions.set(ref.sessionId, state);
    await this.guard('bootstrap', ref.sessionId, () =>
      this.engine.bootstrap?.({ ...ref, messages: window.map((m) => m.message) }),
    );
    await this.evictPastLimit();
  }

  /**
   * After messages were stored (a turn's reply): reads the ones the engine has not seen with `load`
   * (from a seq on) and ingests them without holding up the caller. The next `sync` of the session
   * waits for it, so the engine sees them before it assembles again.
   */
  ingestLater(ref: SessionRef, load: (fromSeq: number) => Promise<readonly StoredMessage[]>): void {
    const state = this.sessions.get(ref.sessionId);
    if (!state) return; // not bootstrapped here: the next sync bootstraps with these messages in the window
    state.pending = state.pending
      .then(async () => this.ingestNew(state, await load(state.ingestedThroughSeq + 1)))
      .catch((err: unknown) =>
        this.reporter.failed(this.engine.id, 'ingest', err, { sessionId: ref.sessionId, fallback: false }),
      );
  }

  /** The engine's assembly, or `legacy`'s when the engine throws. */
  async assemble(params: AssembleParams): Promise<AssembleResult> {
    try {
      return await this.engine.assemble(params);
    } catch (err) {
      if (isCancellation(err)) throw err;
      this.reporter.failed(this.engine.id, 'assemble', err, { sessionId: params.sessionId, fallback: true });
      return this.fallback.assemble(params);
    }
  }

  /** The engine's compaction; a throwing engine delegates to Keel's compaction. */
  async compact(params: CompactParams): Promise<CompactResult> {
    try {
      return await this.engine.compact(params);
    } catch (err) {
      if (isCancellation(err)) throw err;
      this.reporter.failed(this.engine.id, 'compact', err, { sessionId: params.sessionId, fallback: true });
      return { delegated: true };
    }
  }

  /** After a successful turn. */
  async afterTurn(params: SessionRef & { messages: readonly AgentMessage[]; contextTokens?: number }): Promise<void> {
    await this.guard('afterTurn', params.sessionId, () => this.engine.afterTurn?.(params));
  }

  /** Before a subagent starts. */
  async prepareSubagentSpawn(params: { parentSessionKey: string; childSessionKey: string }): Promise<void> {
    await this.guard('prepareSubagentSpawn', undefined, () => this.engine.prepareSubagentSpawn?.(params));
  }

  /** A subagent run ended. */
  async onSubagentEnded(params: {
    childSessionKey: string;
    outcome: 'ok' | 'error' | 'killed' | 'timeout';
  }): Promise<void> {
    await this.guard('onSubagentEnded', undefined, () => this.engine.onSubagentEnded?.(params));
  }

  /** The worker drops a session: the engine disposes what it keeps for it. */
  async drop(sessionId: string): Promise<void> {
    const state = this.sessions.get(sessionId);
    if (!state) return;
    this.sessions.delete(sessionId);
    await state.pending;
    await this.guard('dispose', sessionId, () => this.engine.dispose?.(state.ref));
  }

  /** The worker stops: every session it holds is disposed. */
  async close(): Promise<void> {
    for (const sessionId of [...this.sessions.keys()]) await this.drop(sessionId);
  }

  private async ingestNew(state: SessionState, messages: readonly StoredMessage[]): Promise<void> {
    const fresh = messages.filter((m) => m.seq > state.ingestedThroughSeq);
    if (fresh.length === 0) return;
    state.ingestedThroughSeq = lastSeq(fresh, state.ingestedThroughSeq);
    const { ref } = state;
    await this.guard('ingest', ref.sessionId, async () => {
      if (this.engine.ingestBatch) return this.engine.ingestBatch({ ...ref, messages: fresh.map((m) => m.message) });
      for (const m of fresh) await this.engine.ingest({ ...ref, message: m.message, entryId: m.entryId });
    });
  }

  private touch(sessionId: string, state: SessionState): void {
    this.sessions.delete(sessionId);
    this.sessions.set(sessionId, state);
  }

  private async evictPastLimit(): Promise<void> {
    while (this.sessions.size > this.maxSessions) {
      const oldest = this.sessions.keys().next().value as string;
      this.reporter.evicted(this.engine.id, oldest, this.maxSessions);
      await this.drop(oldest);
    }
  }

  /** Runs a lifecycle call; a failure is reported and swallowed (cancellation re-thrown). */
  private async guard(method: EngineMethod, sessionId: string | undefined, call: () => unknown): Promise<void> {
    try {
      await call();
    } catch (err) {
      if (isCancellation(err)) throw err;
      this.reporter.failed(this.engine.id, method, err, { ...(sessionId ? { sessionId } : {}), fallback: false });
    }
  }
}

function lastSeq(messages: readonly StoredMessage[], otherwise: number): number {
  return messages.reduce((last, m) => Math.max(last, m.seq), otherwise);
}
