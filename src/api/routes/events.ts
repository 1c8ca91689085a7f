import type { Hono } from 'hono';
import { streamSSE, type SSEStreamingApi } from 'hono/streaming';
import type { z } from 'zod';
import { neverRan } from '../../operations/sessions/session-errors';
import { DEFAULTS } from '../../config/defaults';
import { getSession } from '../../store/sessions-repo';
import { SessionEventReader, type SessionEvent } from '../../store/session-events-repo';
import { sessionEventsChannel } from '../../streaming/session-events-channel';
import type { ApiDeps } from '../api-deps';
import { parseHeaders, parsePath, parseQuery } from '../parse-request';
import { eventsHeaders, eventsQuery, sessionKeyParams } from '../request-schemas';
import type { announceEvent, progressEvent, reportEvent, systemEvent } from '../response-schemas';
import type { RunningTurn } from '../../protocol';

/**
 * `GET /v1/sessions/{sessionKey}/events`: what the session says without being asked, as SSE, read
 * from its transcript: `report` when a subagent's report reaches it, `announce` with its answer;
 * and, asked with `?progress=true`, `progress` while a turn runs, when its calls, tokens or compactions move.
 * Each event's `id` is its transcript entry's `seq`; `Last-Event-ID` (or `?after=`) resumes after
 * one. Every stream reads for itself: none takes an event from another, or from the chat. Woken by
 * the session's NOTIFY channel where the store delivers it, and polling in any case. The stream runs
 * until the client leaves.
 */
export function registerEventRoutes(app: Hono, deps: ApiDeps): void {
  app.get('/v1/sessions/:sessionKey/events', async (c) => {
    const { sessionKey } = parsePath(c, sessionKeyParams);
    const { after, progress: withProgress } = parseQuery(c, eventsQuery);
    const resume = parseHeaders(c, eventsHeaders)['last-event-id'] ?? after;
    const session = { agentId: deps.client.identify(sessionKey).agentId, sessionKey };
    // An unknown session is a 404 before the stream starts.
    if (!(await getSession(deps.db, session.agentId, sessionKey))) throw neverRan(sessionKey);
    const reader = await SessionEventReader.open(deps.db, session, resume);
    const pollMs = deps.eventsPollMs ?? DEFAULTS.apiEventsPollMs;
    return streamSSE(c, async (stream) => {
      const wake = new Wakeup();
      stream.onAbort(() => wake.ring());
      const stopListening = await deps.events
        ?.listen(sessionEventsChannel(session), () => wake.ring())
        // Without the notice the stream still polls.
        .catch(() => undefined);
      try {
        // The position first: a client that reconnects before any event resumes here, missing nothing.
        await stream.write(`id: ${reader.position}\n\n`);
        const progress = withProgress === 'true' ? new RunningTurnWatch(deps.client, sessionKey) : undefined;
        while (!stream.aborted) {
          // A failing read is skipped: the next one may reach the database again.
          for (const event of await reader.read().catch(() => [])) await write(stream, event);
          const running = await progress?.changed();
          if (running && !stream.aborted)
            await stream.writeSSE({ event: 'progress', data: JSON.stringify(running) }).catch(() => undefined);
          await wake.wait(pollMs);
        }
      } finally {
        await stopListening?.().catch(() => undefined);
      }
    });
  });
}

async function write(stream: SSEStreamingApi, event: SessionEvent): Promise<void> {
  if (stream.aborted) return;
  const { seq, kind, ...data } = event;
  const payload: z.output<typeof reportEvent> | z.output<typeof announceEvent> | z.output<typeof systemEvent> = data;
  await stream.writeSSE({ event: kind, id: String(seq), data: JSON.stringify(payload) }).catch(() => undefined);
}

/**
 * A running turn's progress as the session's status reports it, handed out when it changed (a new
 * model call, a compaction). Only a running workflow is asked: a closed one is not replayed to
 * answer. `progress` events carry no id: they are not resumed, the next one says where the run is.
 */
class RunningTurnWatch {
  private last = '';
  constructor(
    private readonly client: ApiDeps['client'],
    private readonly sessionKey: string,
  ) {}

  async changed(): Promise<z.output<typeof progressEvent> | undefined> {
    const running = await this.runningTurn().catch(() => undefined);
    const shown = running ? JSON.stringify(running) : '';
    if (shown === this.last) return undefined;
    this.last = shown;
    return running;
  }

  private async runningTurn(): Promise<RunningTurn | undefined> {
    const handle = this.client.temporal.workflow.getHandle(this.client.identify(this.sessionKey).workflowId);
    if ((await handle.describe()).status.name !== 'RUNNING') return undefined;
    return (await this.client.getStatus(this.sessionKey)).runningTurn;
  }
}

/** A sleep that a notice (or the client leaving) cuts short; a notice during the work before it is kept. */
class Wakeup {
  private rung = false;
  private wakeUp: (() => void) | undefined;

  ring(): void {
    this.rung = true;
    this.wakeUp?.();
  }

  async wait(ms: number): Promise<void> {
    if (!this.rung) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.wakeUp = resolve;
        timer = setTimeout(resolve, ms);
      });
      clearTimeout(timer);
      this.wakeUp = undefined;
    }
    this.rung = false;
  }
}
