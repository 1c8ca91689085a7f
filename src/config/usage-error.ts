/**
 * Bad usage (of a command, or of the settings a command needs): the command line exits 2 and the
 * message says what to type or set instead. Declared outside src/cli so code a client loads (the
 * package's root entry) can throw it without loading the command line.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
