/**
 * The context engine activities call: the worker's slot for the agent (one engine instance per
 * worker, src/engine/engine-slot.ts), with its failures logged and counted.
 */
import { Context, log } from '@temporalio/activity';
import { depsForAgent, type ActivityDeps } from '../../src/runtime/deps';
import { EngineSlots } from '../../src/engine/engine-slots';
import type { ContextEngineSlot, EngineSlotReporter, StoredMessage } from '../../src/engine/engine-slot';
import type { KeelMetrics } from '../../src/observability/metrics';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/store/schema';
import { entriesInSeqRange } from '../../src/store/entries-repo';

/** Slots for deps a worker did not build (an activity called directly). */
const unowned = new EngineSlots();

/** The agent's context-engine slot on this worker. */
export function engineOf(deps: ActivityDeps): ContextEngineSlot {
  return (deps.contextEngines ?? unowned).for(deps.config);
}

/**
 * The deps with the worker's engine slots on every agent's deps (`runtime.deps.contextEngines` when
 * the runtime made them, so closing the runtime disposes their sessions), reporting to its log and metrics.
 */
export function withContextEngines(deps: ActivityDeps): ActivityDeps {
  const engines = deps.contextEngines ?? new EngineSlots();
  engines.reportTo(engineFailureReporter(deps.metrics));
  const augmented = new WeakMap<ActivityDeps, ActivityDeps>();
  const augment = (agentDeps: ActivityDeps): ActivityDeps => {
    let done = augmented.get(agentDeps);
    if (!done) {
      done = { ...agentDeps, contextEngines: engines };
      augmented.set(agentDeps, done);
    }
    return done;
  };
  return { ...deps, contextEngines: engines, forAgent: (agentId) => augment(depsForAgent(deps, agentId)) };
}

/** The session's stored messages from `fromSeq` on (on its active branch), for the engine's ingest. */
export async function storedMessagesFrom(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
  fromSeq: number,
): Promise<StoredMessage[]> {
  const out: StoredMessage[] = [];
  for (const row of await entriesInSeqRange(db, agentId, sessionId, { from: fromSeq }))
    if (row.type === 'message') out.push({ entryId: row.id, seq: Number(row.seq), message: row.payload.message });
  return out;
}

/** One warning line per failed engine call (the activity's log when in one), and the metric. */
function engineFailureReporter(metrics: KeelMetrics | undefined): EngineSlotReporter {
  return {
    failed(engineId, method, err, fields) {
      metrics?.engineFailure(engineId, method, fields.fallback);
      const message = `context engine ${engineId}: ${method} failed${fields.fallback ? '; the legacy engine answered instead' : ''}: ${err instanceof Error ? err.message : String(err)}`;
      const line = { engine: engineId, method, ...fields };
      warn(message, line);
    },
    evicted(engineId, sessionId, maxSessions) {
      warn(
        `context engine ${engineId}: session ${sessionId} disposed, the least recently used past ${maxSessions} sessions on this worker (DEFAULTS.contextEngineSessionsPerWorker); it is bootstrapped again when it returns`,
        { engine: engineId, sessionId },
      );
    },
  };
}

/** The activity's log when in one (with its session fields), else the worker's stderr. */
function warn(message: string, fields: Record<string, unknown>): void {
  if (inActivity()) log.warn(message, fields);
  else process.stderr.write(`keel worker: ${message} ${JSON.stringify(fields)}\n`);
}

function inActivity(): boolean {
  try {
    Context.current();
    return true;
  } catch {
    return false;
  }
}
