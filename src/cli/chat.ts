import { randomUUID } from 'node:crypto';
import { clearLine, createInterface, cursorTo } from 'node:readline';
import type { KeelClient } from '../client/keel-client';
import { FailureTypes, type SessionStatus } from '../protocol';
import { contextBar, contextSplitBar } from './context-bar';
import { printStreamedReply, type TextOut } from './print-streamed-reply';
import { CHAT_HELP, parseChatLine, type ChatLine } from './chat-commands';
import { watchAnnounces, watchRetries } from './chat-watch';
import { statusLine } from './status-line';
import { chatCompactionLine } from './compaction-outcome';
import { watchApprovals, type ApprovalWatch } from './chat-approvals';
import { describeOutcome } from './approvals';
import type { ThinkingLevel } from '../turn/thinking-level';
import type { SessionThinkingReport } from '../operations/sessions/session-thinking';

/** How long `/approve` at the prompt looks for a call another client's turn waits on before saying there is none. */
const IDLE_DECISION_WAIT_MS = 2_000;

/** How long a cancelled turn may take to confirm before the chat goes back to the prompt anyway. */
const CANCEL_CONFIRM_MS = 5_000;

/** The request in flight: a turn (cancellable by its id) or a compaction (only left to finish). */
interface InFlight {
  readonly requestId?: string;
  cancelling: boolean;
  /** Stops waiting for it: the chat goes on, whatever it prints later is dropped. */
  readonly abandon: () => void;
  giveUp?: NodeJS.Timeout;
}

/** What the chat can do besides talking to the session workflow. */
export interface ChatOptions {
  /**
   * Shows, sets or (`null`) clears the session's stored thinking level (needs the workers' database).
   * Without it `/think` sets the level of this chat's turns only, and says so.
   */
  readonly sessionThinking?: (level: ThinkingLevel | null | undefined) => Promise<SessionThinkingReport>;
}

/**
 * The interactive chat of `keel dev` and `keel chat`: one line, one durable turn, the reply printed
 * as it streams, the turn's tool calls, then the context-usage bar. Lines starting with `/` are the
 * chat's own commands (`/help`). Lines that arrive faster than turns (a pipe, a pasted block) wait
 * their turn in order; at the end of piped input the last reply is awaited before returning.
 *
 * Nobody is trapped: Ctrl-C (or SIGINT) while a turn runs cancels that turn (`cancelRequest`) and
 * returns to the prompt; Ctrl-C at the prompt, a second Ctrl-C while cancelling, Ctrl-D at a
 * terminal, or SIGTERM leaves at once, cancelling what runs. While a turn waits on a failing step,
 * the failure is said on one line; at the prompt, replies to subagents' announces appear as they come.
 */
export async function chat(
  client: KeelClient,
  sessionKey: string,
  log: (l: string) => void,
  opts: ChatOptions = {},
): Promise<void> {
  const tty = Boolean(process.stdin.isTTY);
  log(
    `chat: session ${sessionKey}. Type a message; /help lists the commands; Ctrl-C cancels a reply; Ctrl-C at the prompt or Ctrl-D leaves.`,
  );
  // At a terminal a failing step's retry line is redrawn in place; whatever else is printed clears it first.
  const waiting = process.stdout.isTTY ? statusLine(process.stdout) : undefined;
  const say = (line: string) => {
    waiting?.clear();
    log(line);
  };
  const rl = createInterface({ input: process.stdin, output: process.stdout, prompt: 'you › ' });
  const lines: string[] = [];
  let inputEnded = false;
  let leaving = false;
  let inFlight: InFlight | undefined;
  // The running turn's calls waiting for approval: /approve and /deny decide them while the turn waits.
  let approvals: ApprovalWatch | undefined;
  let wake: (() => void) | undefined;
  const woken = () => {
    wake?.();
    wake = undefined;
  };

  // Cancels on their way, and the calls they end: leaving waits for both (briefly), so the stack's
  // connection is never closed under a call still in flight.
  const cancels: Array<Promise<unknown>> = [];
  const cancel = (flight: InFlight) => {
    flight.cancelling = true;
    if (flight.requestId)
      cancels.push(
        client
          .cancelRequest(sessionKey, flight.requestId)
          .catch((err: unknown) => log(`cancel failed: ${messageOf(err)}`)),
      );
  };
  const leave = () => {
    leaving = true;
    if (inFlight) {
      if (!inFlight.cancelling) cancel(inFlight);
      inFlight.abandon();
    }
    woken();
  };
  const interrupt = () => {
    if (!inFlight || inFlight.cancelling) return leave();
    const flight = inFlight;
    cancel(flight);
    // Lines typed (or piped) ahead were meant to follow this turn: they are dropped with it, so the
    // next Ctrl-C finds the prompt rather than the next of them already running.
    const dropped = flight.requestId ? lines.splice(0).length : 0;
    const ahead = dropped ? `; ${dropped} line${dropped === 1 ? '' : 's'} typed ahead dropped` : '';
    if (flight.requestId) say(`cancelling the turn…${ahead} (Ctrl-C again leaves)`);
    else say('the compaction goes on in the background');
    flight.giveUp = setTimeout(() => flight.abandon(), flight.requestId ? CANCEL_CONFIRM_MS : 0);
  };
  /** `/approve` or `/deny` for the running turn: decided now, not queued behind the turn that waits for it. */
  const decide = async (command: Extract<ChatLine, { kind: 'approve' | 'deny' }>, watch: ApprovalWatch) => {
    try {
      const outcome = await watch.decide(command.kind, command.words);
      say(typeof outcome === 'string' ? outcome : describeOutcome(outcome));
    } catch (err) {
      say(`${command.kind} failed: ${messageOf(err)}`);
    }
  };
  rl.on('line', (line) => {
    const command = parseChatLine(line.trim());
    if (approvals && (command.kind === 'approve' || command.kind === 'deny')) {
      void decide(command, approvals);
      return;
    }
    lines.push(line);
    woken();
  });
  rl.on('close', () => {
    inputEnded = true;
    // Ctrl-D at a terminal leaves now; the end of piped input lets the queued lines run first.
    if (tty) leave();
    woken();
  });
  rl.on('SIGINT', interrupt);
  process.on('SIGINT', interrupt);
  process.on('SIGTERM', leave);

  const nextLine = async (): Promise<string | undefined> => {
    for (;;) {
      if (leaving) return undefined;
      const line = lines.shift();
      if (line !== undefined) return line;
      if (inputEnded) return undefined;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  };

  /** Runs one request until it settles or is abandoned; output after abandonment is dropped. */
  const inFlightRun = async (
    requestId: string | undefined,
    run: (out: TextOut, sayWhileOpen: (l: string) => void) => Promise<void>,
  ): Promise<void> => {
    let open = true;
    let abandon!: () => void;
    const abandoned = new Promise<void>((resolve) => (abandon = resolve));
    const flight: InFlight = { ...(requestId ? { requestId } : {}), cancelling: false, abandon };
    inFlight = flight;
    const out: TextOut = {
      write: (text) => open && (waiting?.clear(), process.stdout.write(text)),
      isTTY: process.stdout.isTTY,
    };
    const sayWhileOpen = (line: string) => open && say(line);
    const retries = watchRetries(client, sessionKey, (line) =>
      waiting ? open && waiting.show(line) : sayWhileOpen(line),
    );
    approvals = requestId ? watchApprovals(client, sessionKey, sayWhileOpen) : undefined;
    const running = run(out, sayWhileOpen);
    try {
      await Promise.race([running, abandoned]);
    } catch (err) {
      if ((err as { type?: string }).type === FailureTypes.Cancelled)
        say(
          '\nturn cancelled: what it wrote stays in the transcript, marked cancelled, and is left out of the conversation',
        );
      else say(`request failed: ${messageOf(err)}`);
    } finally {
      open = false;
      const ended = running.catch(() => undefined);
      // Abandoned, not ended: a cancelled turn's call settles once the workflow confirms the cancel.
      if (flight.cancelling) cancels.push(ended);
      retries.stop();
      waiting?.clear();
      approvals?.stop();
      approvals = undefined;
      clearTimeout(flight.giveUp);
      inFlight = undefined;
    }
  };

  const logStatus = (status: SessionStatus) => {
    log(contextBar(status));
    if (status.contextSplit) log(contextSplitBar(status.contextSplit, status.contextWindow));
  };
  // `/think` without the session's store: the level this chat's turns ask for.
  let chatThinking: ThinkingLevel | undefined;
  const turn = (text: string) => {
    const requestId = randomUUID();
    const thinking = chatThinking ? { thinking: chatThinking } : {};
    return inFlightRun(requestId, async (out, say) => {
      await printStreamedReply(client.streamMessage(sessionKey, text, { requestId, ...thinking }), say, out);
      logStatus(await client.getStatus(sessionKey));
    });
  };

  /** Runs one line; false when the chat should end. */
  const handle = async (command: ChatLine): Promise<boolean> => {
    switch (command.kind) {
      case 'quit':
        return false;
      case 'help':
        log(CHAT_HELP);
        return true;
      case 'unknown':
        log(`unknown command ${command.command}: /help lists the commands`);
        return true;
      case 'status':
        logStatus(await client.getStatus(sessionKey));
        return true;
      case 'think':
        if (command.problem) log(command.problem);
        else if (opts.sessionThinking) {
          const report = await opts.sessionThinking(command.level);
          log(
            `thinking: ${report.level} (${report.source === 'session' ? 'this session' : `agent ${report.agentId}'s level`})`,
          );
        } else {
          if (command.level !== undefined) chatThinking = command.level ?? undefined;
          log(
            `thinking: ${chatThinking ?? "the session's level"} for this chat's turns (the session's stored level: keel session thinking)`,
          );
        }
        return true;
      case 'compact':
        log('compacting…');
        await inFlightRun(undefined, async (_out, say) => {
          const before = await client.getStatus(sessionKey);
          const result = await client.compact(
            sessionKey,
            command.instructions ? { instructions: command.instructions } : {},
          );
          const after = await client.getStatus(sessionKey);
          say(chatCompactionLine(result, before, after));
          logStatus(after);
        });
        return true;
      case 'new':
        // Said first: the reply that follows is the new session's.
        log(`started a new session for ${sessionKey}: the model no longer sees the earlier messages`);
        await turn(command.text);
        return true;
      case 'message':
        await turn(command.text);
        return true;
      case 'approve':
      case 'deny': {
        // No turn of this chat waits; another client's turn in this session may.
        const watch = watchApprovals(client, sessionKey, log);
        try {
          await Promise.race([decide(command, watch), new Promise((r) => setTimeout(r, IDLE_DECISION_WAIT_MS))]);
        } finally {
          watch.stop();
        }
        return true;
      }
    }
  };

  // Replies nobody typed for (a subagent's announce answered): shown above the prompt as they come.
  const showUnasked = (subagentId: string, reply: string | undefined) => {
    if (tty) {
      clearLine(process.stdout, 0);
      cursorTo(process.stdout, 0);
    }
    log(`subagent ${subagentId.slice(0, 8)} reported back`);
    process.stdout.write(`keel › ${reply ?? '(no reply)'}\n`);
    rl.prompt(true);
  };

  rl.prompt();
  let announces = watchAnnounces(client, sessionKey, showUnasked);
  try {
    for (;;) {
      const raw = await nextLine();
      if (raw === undefined) return;
      const line = raw.trim();
      if (!line) {
        rl.prompt();
        continue;
      }
      announces.stop();
      try {
        if (!(await handle(parseChatLine(line)))) return;
      } catch (err) {
        log(`failed: ${messageOf(err)}`);
      }
      if (leaving) return;
      announces = watchAnnounces(client, sessionKey, showUnasked);
      rl.prompt();
    }
  } finally {
    // Leaving from the prompt: what is said next starts on a line of its own.
    if (tty && leaving) process.stdout.write('\n');
    announces.stop();
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', leave);
    rl.close();
    await Promise.race([
      Promise.allSettled(cancels),
      new Promise((resolve) => setTimeout(resolve, CANCEL_CONFIRM_MS).unref()),
    ]);
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
