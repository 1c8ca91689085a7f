/**
 * The compaction running beside a session (`soft`, `idle`), as the session knows it: which one, since
 * when, and whether a turn waits for it. Plain state with no I/O, handed on across continue-as-new,
 * so the rules (one at a time; only its own landing clears it) are tested without a server.
 */
import type { BackgroundCompaction, CompactionLanded, SessionStatus } from '../src/protocol';

/** At most one compaction beside the session; see the module comment. */
export class CompactionBeside {
  private running: BackgroundCompaction | undefined;
  /** Workflow time (ms) since a turn has waited for it: the context reached the hard limit first. */
  private waitingSince: number | undefined;
  /** The last landing heard, for the turn that waited for it. */
  private lastLanded: CompactionLanded | undefined;

  constructor(carried?: BackgroundCompaction) {
    this.running = carried;
  }

  /** A compaction beside the session is running. */
  isRunning(): boolean {
    return this.running !== undefined;
  }

  /** A compaction was started beside the session. */
  started(compaction: BackgroundCompaction): void {
    this.running = compaction;
    this.lastLanded = undefined;
  }

  /** Its landing: true when it was the running one (a stray or repeated signal changes nothing). */
  landed(landing: CompactionLanded): boolean {
    if (this.running?.compactionId !== landing.compactionId) return false;
    this.running = undefined;
    this.waitingSince = undefined;
    this.lastLanded = landing;
    return true;
  }

  /** A turn starts (at `nowMs`) or stops waiting for it. */
  waiting(nowMs: number | undefined): void {
    this.waitingSince = this.running ? nowMs : undefined;
  }

  /** What the last landing was, once: the waiting turn's compaction when it wrote a summary. */
  takeLanded(): CompactionLanded | undefined {
    const landed = this.lastLanded;
    this.lastLanded = undefined;
    return landed;
  }

  /** What continue-as-new hands on (nothing when none runs). */
  carried(): { backgroundCompaction?: BackgroundCompaction } {
    return this.running ? { backgroundCompaction: this.running } : {};
  }

  /** Status: which compaction runs, for how long, and how long a turn has waited for it. */
  status(nowMs: number): Pick<SessionStatus, 'backgroundCompaction'> {
    if (!this.running) return {};
    const runningMs = Math.max(0, nowMs - Date.parse(this.running.startedAt));
    const waiting = this.waitingSince !== undefined ? { turnWaitingMs: Math.max(0, nowMs - this.waitingSince) } : {};
    return { backgroundCompaction: { ...this.running, runningMs, ...waiting } };
  }
}
