/**
 * Messages of the baseline workflows, defined once for the workflows and the bench that drives them.
 * The baseline has the shape of a Keel turn (an Update that awaits one regular activity) and nothing
 * else, so `keel turn / baseline` is what Keel's own work costs on the same server in the same run.
 */
import { defineSignal, defineUpdate } from '@temporalio/workflow';

/** One baseline "turn": the handler runs one regular no-op activity and returns its result. */
export const baselineTurnUpdate = defineUpdate<number, [number]>('baselineTurn');

/** A baseline "turn" with a text turn's I/O (`turnIo`: four statements and one streamed model call). */
export const baselineIoTurnUpdate = defineUpdate<number, [number]>('baselineIoTurn');

/** Ends a baseline session workflow once the bench is done with it. */
export const baselineStopSignal = defineSignal('baselineStop');
