import { z } from 'zod';
import { InvalidSessionKeyError } from './errors';
import { parseSessionKey, type ParsedSessionKey } from './session-key';

/**
 * Parses a string into a `ParsedSessionKey` at input edges; the issue message is the error's. Apart
 * from session-key.ts because workflow code imports that file: zod in the workflow bundle is
 * evaluated again for every workflow the worker creates.
 */
export const sessionKeySchema = z.string().transform((value, ctx): ParsedSessionKey => {
  try {
    return parseSessionKey(value);
  } catch (error) {
    if (!(error instanceof InvalidSessionKeyError)) throw error;
    ctx.addIssue({ code: 'custom', message: error.message });
    return z.NEVER;
  }
});
