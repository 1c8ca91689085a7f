import { ApplicationFailure } from '@temporalio/client';
import { retryAdmission, isAdmissionRejected } from '../../src/client/retry-admission';

/** The shape the Temporal client gives a gRPC refusal: a ServiceError whose cause carries the code. */
function refused(): Error {
  const grpc = Object.assign(
    new Error('8 RESOURCE_EXHAUSTED: limit on number of concurrent in-flight updates has been reached (10)'),
    {
      code: 8,
      details: 'limit reached',
      metadata: { get: () => [] },
    },
  );
  return Object.assign(new Error('Workflow Update failed'), { cause: grpc });
}

describe('retryAdmission', () => {
  it('retries a capacity refusal with growing, jittered waits until the call is admitted', async () => {
    const waits: number[] = [];
    let attempts = 0;
    const result = await retryAdmission(
      async () => {
        if (++attempts < 4) throw refused();
        return 'admitted';
      },
      { sleep: async (ms) => void waits.push(ms), random: () => 1, initialDelayMs: 100 },
    );
    expect(result).toBe('admitted');
    expect(waits).toEqual([100, 200, 400]);
  });

  it('does not retry other failures', async () => {
    let attempts = 0;
    await expect(
      retryAdmission(async () => {
        attempts++;
        throw new Error('invalid input');
      }),
    ).rejects.toThrow('invalid input');
    expect(attempts).toBe(1);
  });

  it('gives up at the deadline with the refusal', async () => {
    await expect(
      retryAdmission(async () => Promise.reject(refused()), { deadlineMs: 0, sleep: async () => {} }),
    ).rejects.toThrow('Workflow Update failed');
  });

  it('retries an Update the server reports as never processed (its run continued-as-new first)', () => {
    const unprocessed = Object.assign(new Error('Workflow Update failed'), {
      cause: ApplicationFailure.create({
        message: "Workflow Update is rejected because it wasn't processed by worker.",
        type: 'UnprocessedUpdate',
        nonRetryable: true,
      }),
    });
    expect(isAdmissionRejected(unprocessed)).toBe(true);
    const ranAndFailed = Object.assign(new Error('Workflow Update failed'), {
      cause: ApplicationFailure.create({ message: 'tool broke', type: 'KeelInvalidInput' }),
    });
    expect(isAdmissionRejected(ranAndFailed)).toBe(false);
  });

  it('recognises a refusal only by its gRPC code', () => {
    expect(isAdmissionRejected(refused())).toBe(true);
    expect(isAdmissionRejected(new Error('RESOURCE_EXHAUSTED in the message only'))).toBe(false);
  });
});
