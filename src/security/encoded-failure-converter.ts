import { DefaultFailureConverter } from '@temporalio/common';

/**
 * Failures with their message and stack trace moved into an encoded payload, so the payload codec
 * encrypts them too (an error can quote user text). Loaded by path (`failureConverterPath`) by
 * workers, clients and the workflow bundle; it must stay importable inside the workflow sandbox.
 */
export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
