/**
 * How a client hears a reply stream: LISTEN on a request's channel (`replyChannel`). `listen`
 * resolves once the LISTEN is in force, so a client that subscribes before admitting its request
 * misses no chunk; it returns the function that stops listening.
 */
export interface ReplyStreamSubscriber {
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
  /**
   * Why this subscriber can hear no reply at all (checked once), so the client says so instead of
   * never calling `onText`; undefined when it can, or cannot tell.
   */
  cannotHear?(): Promise<string | undefined>;
}
