/**
 * What a tool throws to ask for another run. Any other error a tool throws becomes an error result
 * the model reads at once; this one is retried first, with the same idempotency key, under the
 * tool's `retry` policy (or the default one), and only the last failure reaches the model.
 *
 * @example
 *   if (response.status === 503) throw new RetryableToolError('the billing API is unavailable (503)');
 */
export class RetryableToolError extends Error {
  override readonly name = 'RetryableToolError';
}
