import { ApplicationFailure, DefaultFailureConverter, defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { boundFailure, withBoundedFailures } from '../../activities/parts/bounded-failures';
import { ModelConnectionError } from '../../src/model/errors';
import { DEFAULTS } from '../../src/config/defaults';

/** The bytes Temporal is sent for a failure: the server keeps an activity's last failure up to 4 KB. */
function encodedFailureBytes(err: unknown): number {
  const failure = new DefaultFailureConverter().errorToFailure(err, defaultPayloadConverter);
  return temporal.api.failure.v1.Failure.encode(failure).finish().length;
}

/** An error whose stack has `frames` frames under a deep install folder, as a compiled worker's are. */
function deepError(message: string, frames = 10, cause?: unknown): Error {
  const err = new Error(message, cause === undefined ? {} : { cause });
  const folder = '/home/operator/deployments/fleet-a/releases/2026-12-07/node_modules/keel-agents/dist';
  err.stack = [
    `Error: ${message}`,
    ...Array.from({ length: frames }, (_, i) => `    at step${i} (${folder}/src/model/module-${i}.js:${100 + i}:17)`),
  ].join('\n');
  return err;
}

describe('withBoundedFailures', () => {
  it('keeps a model call failure with its cause chain under the size Temporal keeps, naming where it tried', async () => {
    const transport = deepError('fetch failed', 10, deepError('connect ECONNREFUSED 127.0.0.1:9', 10));
    const failed = new ModelConnectionError({ providerMessage: 'fetch failed ECONNREFUSED', cause: transport }).at(
      'http://127.0.0.1:9 (ANTHROPIC_BASE_URL)',
    );
    failed.stack = deepError(failed.message, 10).stack!.replace(/^Error/, 'ModelConnectionError');
    expect(encodedFailureBytes(failed)).toBeGreaterThan(4_096);

    const activities = withBoundedFailures(
      {
        callModel: async () => {
          throw failed;
        },
      },
      DEFAULTS.activityFailureBounds,
    );
    const thrown = await activities.callModel().catch((e: unknown) => e);
    expect(thrown).toBe(failed);
    expect(thrown).toBeInstanceOf(ModelConnectionError);
    expect(encodedFailureBytes(thrown)).toBeLessThan(2_048);
    expect((thrown as Error).message).toBe(
      'model unreachable at http://127.0.0.1:9 (ANTHROPIC_BASE_URL): fetch failed ECONNREFUSED',
    );
    expect((thrown as Error).stack!.split('\n')).toHaveLength(1 + DEFAULTS.activityFailureBounds.stackFrames);
    // The transport's causes are kept to the chain's depth.
    expect(((thrown as Error).cause as Error).message).toBe('fetch failed');
  });

  it("cuts a long message, saying how much, and keeps an ApplicationFailure's type and details", () => {
    const err = ApplicationFailure.create({
      message: 'x'.repeat(5_000),
      type: 'KeelModelRequestInvalid',
      details: [{ status: 400 }],
      nonRetryable: true,
    });
    boundFailure(err, { messageChars: 100, stackFrames: 2, chainDepth: 2 });
    expect(err.message).toBe(`${'x'.repeat(100)}… (4900 more characters)`);
    expect(err).toMatchObject({ type: 'KeelModelRequestInvalid', details: [{ status: 400 }], nonRetryable: true });
    expect(encodedFailureBytes(err)).toBeLessThan(1_024);
  });

  it('drops causes past the chain depth', () => {
    const err = deepError('top', 3, deepError('middle', 3, deepError('bottom', 3)));
    boundFailure(err, { messageChars: 100, stackFrames: 1, chainDepth: 2 });
    expect((err.cause as Error).message).toBe('middle');
    expect((err.cause as Error).cause).toBeUndefined();
    expect(err.stack).toBe(
      'Error\n    at step0 (/home/operator/deployments/fleet-a/releases/2026-12-07/node_modules/keel-agents/dist/src/model/module-0.js:100:17)',
    );
  });
});
