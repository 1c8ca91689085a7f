import type { Logger } from '@temporalio/common';
import type { InjectedSinks } from '@temporalio/worker';
import type { KeelMetrics } from '../src/observability/metrics';
import type { KeelSinks } from '../workflows/turn-timing';

/**
 * The worker side of the workflows' `keel` sink: one `turn` log line per turn with its step
 * latencies and tokens, and the turn-latency histogram. Never called on replay.
 */
export function keelSinks(logger: Logger, metrics: KeelMetrics | undefined): InjectedSinks<KeelSinks> {
  return {
    keel: {
      turn: {
        fn(info, r) {
          metrics?.turn(r.agentId, r.totalMs / 1000);
          logger.info('turn', {
            event: 'turn',
            agentId: r.agentId,
            sessionKey: r.sessionKey,
            sessionId: r.sessionId,
            workflowId: info.workflowId,
            turn: r.turn,
            totalMs: r.totalMs,
            steps: r.steps,
            modelCalls: r.modelCalls,
            tokens: {
              input: r.usage.inputTokens,
              output: r.usage.outputTokens,
              cacheRead: r.usage.cacheReadTokens ?? 0,
              cacheWrite: r.usage.cacheWriteTokens ?? 0,
            },
          });
        },
        callDuringReplay: false,
      },
    },
  };
}
