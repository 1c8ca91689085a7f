/**
 * Typed errors of the session rules, each naming the bad part and how to fix it.
 */

/** Which part of a session key was wrong (used by callers to point at the field). */
export type SessionKeyPart =
  'key' | 'prefix' | 'agentId' | 'mainKey' | 'channel' | 'kind' | 'peerId' | 'uuid' | 'jobId' | 'thread';

/**
 * A session key (or the parts given to build one) breaks the grammar in `session-key.ts`.
 *
 * @example
 * new InvalidSessionKeyError('agent::main', 'agentId', 'agentId is empty', 'agent:<agentId>:<mainKey>')
 * // message: session key "agent::main": agentId is empty; expected agent:<agentId>:<mainKey>
 */
export class InvalidSessionKeyError extends Error {
  override readonly name = 'InvalidSessionKeyError';

  constructor(
    /** The key as given (or as far as it could be built from parts). */
    readonly key: string,
    /** The part that is wrong. */
    readonly part: SessionKeyPart,
    /** What is wrong with it, in words. */
    readonly problem: string,
    /** The shape or rule the part must follow: the fix. */
    readonly expected: string,
  ) {
    super(`session key ${JSON.stringify(key)}: ${problem}; expected ${expected}`);
  }
}

/** A reset policy names a time zone that the runtime's Intl database does not know. */
export class InvalidTimeZoneError extends Error {
  override readonly name = 'InvalidTimeZoneError';

  constructor(readonly timeZone: string) {
    super(
      `time zone ${JSON.stringify(timeZone)} is not a known IANA zone; use a name such as "Europe/Berlin" or "UTC"`,
    );
  }
}
