// Activities are async functions of one or more serializable arguments.
type AnyActivity = (...args: never[]) => Promise<unknown>;

/** How much of a failure leaving an activity is kept; a cut message says how much it dropped. */
export interface FailureBounds {
  /** Characters of each message in the chain. */
  readonly messageChars: number;
  /** Stack frames of each error in the chain. */
  readonly stackFrames: number;
  /** Errors in the chain (the error and its causes). */
  readonly chainDepth: number;
}

/**
 * Keeps what a failed attempt tells Temporal small: the server keeps an activity's last failure
 * only while it is a few KB, and replaces a larger one with "Failure exceeds size limit." — so the
 * status line a user reads while a call retries would lose its cause ("model unreachable at …").
 * Stack paths alone can cross that limit (three causes of ten frames under a deep install folder).
 * Messages, frames and causes are cut in place, so the error's class, its fields and the
 * ApplicationFailure's type and details are what they were.
 */
export function withBoundedFailures<T extends Record<string, AnyActivity>>(activities: T, bounds: FailureBounds): T {
  const wrapped: Record<string, AnyActivity> = {};
  for (const [name, fn] of Object.entries(activities)) {
    wrapped[name] = async (...args: never[]) => {
      try {
        return await fn(...args);
      } catch (err) {
        boundFailure(err, bounds);
        throw err;
      }
    };
  }
  return wrapped as T;
}

/** Cuts the messages and stacks of `err` and its causes to `bounds`, and drops causes past the depth. */
export function boundFailure(err: unknown, bounds: FailureBounds): void {
  let current: unknown = err;
  for (let depth = 1; current instanceof Error; depth++) {
    if (current.message.length > bounds.messageChars) current.message = cut(current.message, bounds.messageChars);
    if (current.stack) current.stack = boundStack(current.stack, current.name, bounds.stackFrames);
    if (depth >= bounds.chainDepth && current.cause !== undefined) {
      current.cause = undefined;
      break;
    }
    current = current.cause;
  }
}

/**
 * The error's name (the failure carries its message beside the stack: not twice) and its first
 * `frames` frames.
 */
function boundStack(stack: string, name: string, frames: number): string {
  const lines = stack.split('\n');
  const firstFrame = lines.findIndex((l) => /^\s+at /.test(l));
  return [name, ...(firstFrame < 0 ? [] : lines.slice(firstFrame, firstFrame + frames))].join('\n');
}

function cut(text: string, chars: number): string {
  return `${text.slice(0, chars)}… (${text.length - chars} more characters)`;
}
