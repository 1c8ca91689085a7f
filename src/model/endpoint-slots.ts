/**
 * A per-endpoint limit on model requests in flight, shared by every client in the process: a local
 * server with one slot (llama.cpp, llama-cpp-python) interrupts a running reply when a second
 * request arrives, so Keel's own parallel calls (a compaction's chunk summaries, two sessions'
 * turns) wait their turn here instead.
 */

interface Slots {
  limit: number;
  busy: number;
  readonly waiting: Array<() => void>;
}

const endpoints = new Map<string, Slots>();

/** True for a URL on this machine (loopback), where a server usually has one slot. */
export function isLocalEndpoint(url: string): boolean {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || host.startsWith('127.') || host.endsWith('.localhost');
}

/**
 * Runs `call` once fewer than `limit` calls to `endpoint` run, in arrival order. The latest limit
 * given for an endpoint is the one in force; `Infinity` queues nothing. A caller whose `signal`
 * aborts while it waits leaves the line with the signal's reason, having sent nothing.
 */
export async function withEndpointSlot<T>(
  endpoint: string,
  limit: number,
  call: () => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  let slots = endpoints.get(endpoint);
  if (!slots) endpoints.set(endpoint, (slots = { limit, busy: 0, waiting: [] }));
  slots.limit = limit;
  if (slots.busy >= slots.limit) await waitForSlot(slots, signal);
  else slots.busy += 1;
  try {
    return await call();
  } finally {
    // The slot passes straight to the next caller; it is freed only when nobody waits.
    const next = slots.waiting.shift();
    if (next) next();
    else slots.busy -= 1;
  }
}

function waitForSlot(slots: Slots, signal: AbortSignal | undefined): Promise<void> {
  signal?.throwIfAborted();
  return new Promise<void>((resolve, reject) => {
    const turn = () => {
      signal?.removeEventListener('abort', leave);
      resolve();
    };
    const leave = () => {
      slots.waiting.splice(slots.waiting.indexOf(turn), 1);
      reject(signal!.reason);
    };
    slots.waiting.push(turn);
    signal?.addEventListener('abort', leave, { once: true });
  });
}
