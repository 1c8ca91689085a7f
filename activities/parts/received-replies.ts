import { DEFAULTS } from '../../src/config/defaults';
import type { ModelResponse } from '../../src/model/model-client';

/** A reply kept for a call, and whether what it costs was already recorded (a retry must not count it again). */
export interface ReceivedReply {
  readonly reply: ModelResponse;
  readonly recorded: boolean;
}

/**
 * The model replies this worker process received and has not stored yet, so a retry after a failed
 * write (the database is away) uses the reply instead of paying for the call again. Process-local
 * and never in Temporal: replies with raw tool arguments may be kept here whatever the payload codec.
 *
 * A reply is kept under its `scope` (what it is stored as: an assistant entry id, a flush id, one
 * summarizer activity) and its `part` (which call within the scope: a round, a prompt). Stored, the
 * scope is forgotten. The memo is bounded by bytes, oldest scope evicted first; an evicted or
 * never-stored reply costs at most one repeated call.
 *
 * What it cannot cover: a retry that runs on another worker, or after this process died, calls the
 * model again (a turn's reply is also held in its heartbeat details where that is allowed, see
 * `held-reply.ts`).
 */
export class ReceivedReplies {
  private readonly scopes = new Map<string, Map<string, ReceivedReply & { readonly bytes: number }>>();
  private bytes = 0;

  constructor(private readonly maxBytes: number = DEFAULTS.receivedRepliesMaxBytes) {}

  /** The reply kept for this call, if an earlier attempt received one. */
  get(scope: string, part: string): ReceivedReply | undefined {
    const kept = this.scopes.get(scope)?.get(part);
    return kept && { reply: kept.reply, recorded: kept.recorded };
  }

  /** Keeps `reply` for this call until its scope is forgotten (not kept when larger than the whole memo). */
  keep(scope: string, part: string, reply: ModelResponse, recorded = false): void {
    const bytes = Buffer.byteLength(JSON.stringify(reply));
    if (bytes > this.maxBytes) return;
    const parts = this.scopes.get(scope) ?? new Map<string, ReceivedReply & { readonly bytes: number }>();
    this.bytes -= parts.get(part)?.bytes ?? 0;
    parts.set(part, { reply, recorded, bytes });
    this.bytes += bytes;
    // Most recently kept last: eviction takes the oldest scope first.
    this.scopes.delete(scope);
    this.scopes.set(scope, parts);
    for (const oldest of this.scopes.keys()) {
      if (this.bytes <= this.maxBytes || oldest === scope) break;
      this.forget(oldest);
    }
  }

  /** Forgets every reply of `scope`: it is stored, or its activity finished. */
  forget(scope: string): void {
    const parts = this.scopes.get(scope);
    if (!parts) return;
    for (const kept of parts.values()) this.bytes -= kept.bytes;
    this.scopes.delete(scope);
  }
}
