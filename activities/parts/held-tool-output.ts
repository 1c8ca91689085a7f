import { Context } from '@temporalio/activity';
import { DEFAULTS } from '../../src/config/defaults';
import type { ToolOutput } from '../../src/tools/registry';
import { holdInHeartbeat, type HeartbeatContext } from './held-details';

/** A tool's output that its activity has not stored yet, under the result entry it is stored as. */
export interface HeldToolOutput {
  /** The toolResult entry the output is for: a held output never answers another call. */
  readonly resultEntryId: string;
  readonly toolName: string;
  readonly output: ToolOutput;
}

/**
 * The outputs of tools this worker ran and has not stored yet, so a retry on this worker after a
 * failed write stores the output instead of running the tool again. Process-local: outputs hold
 * unredacted text (redaction happens as they are stored), so they stay out of Temporal unless the
 * payload codec seals them. Bounded by bytes, oldest first out; an evicted output costs a rerun
 * under the call's stable idempotency key.
 */
export class RanToolOutputs {
  private readonly outputs = new Map<string, { readonly held: HeldToolOutput; readonly bytes: number }>();
  private bytes = 0;

  constructor(private readonly maxBytes: number = DEFAULTS.ranToolOutputsMaxBytes) {}

  get(resultEntryId: string): HeldToolOutput | undefined {
    return this.outputs.get(resultEntryId)?.held;
  }

  /** Keeps `held` until forgotten (not kept when larger than the whole memo). */
  keep(held: HeldToolOutput): void {
    const bytes = Buffer.byteLength(JSON.stringify(held));
    if (bytes > this.maxBytes) return;
    this.forget(held.resultEntryId);
    this.outputs.set(held.resultEntryId, { held, bytes });
    this.bytes += bytes;
    for (const oldest of this.outputs.keys()) {
      if (this.bytes <= this.maxBytes) break;
      this.forget(oldest);
    }
  }

  forget(resultEntryId: string): void {
    const kept = this.outputs.get(resultEntryId);
    if (!kept) return;
    this.bytes -= kept.bytes;
    this.outputs.delete(resultEntryId);
  }
}

/** What holding an output needs of the activity's context (a test passes its own). */
type HoldingContext = HeartbeatContext & { readonly info: Pick<Context['info'], 'heartbeatDetails'> };

/** Where a tool's output waits until stored: this worker's memo, and its heartbeat details when sealed. */
export interface ToolOutputHold {
  /** The output an earlier attempt ran for `resultEntryId` (its heartbeat details first, then this worker's memo). */
  take(resultEntryId: string): HeldToolOutput | undefined;
  /** Keeps the output until `release`: always in the memo, in the heartbeat details when payloads are sealed and it fits. */
  hold(held: HeldToolOutput): void;
  /** The output is stored: nothing more to keep. */
  release(resultEntryId: string): void;
}

/**
 * A tool activity's output hold over `memo`. With payload encryption on, the output also rides in
 * the heartbeat details (sealed by the codec), so a retry on another worker stores it too; found
 * there, it is held again at once for the attempt after.
 */
export function toolOutputHold(
  memo: RanToolOutputs,
  payloadsEncrypted: boolean,
  context: () => HoldingContext = () => Context.current(),
): ToolOutputHold {
  return {
    take(resultEntryId) {
      const ctx = context();
      const details = ctx.info.heartbeatDetails as Partial<HeldToolOutput> | undefined;
      if (isHeldFor(details, resultEntryId)) {
        holdInHeartbeat(ctx, details);
        return details;
      }
      return memo.get(resultEntryId);
    },
    hold(held) {
      memo.keep(held);
      if (payloadsEncrypted && Buffer.byteLength(JSON.stringify(held)) <= DEFAULTS.maxHeldReplyBytes)
        holdInHeartbeat(context(), held);
    },
    release: (resultEntryId) => memo.forget(resultEntryId),
  };
}

function isHeldFor(details: Partial<HeldToolOutput> | undefined, resultEntryId: string): details is HeldToolOutput {
  return (
    details?.resultEntryId === resultEntryId &&
    typeof details.toolName === 'string' &&
    Array.isArray(details.output?.content)
  );
}
