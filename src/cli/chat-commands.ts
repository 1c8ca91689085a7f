import { parseResetCommand } from '../sessions/lifecycle';
import { isThinkingLevel, THINKING_LEVELS, type ThinkingLevel } from '../turn/thinking-level';

/** What one typed line asks the chat for: a local command, or a message for the model. */
export type ChatLine =
  | { readonly kind: 'help' }
  | { readonly kind: 'quit' }
  | { readonly kind: 'status' }
  | { readonly kind: 'compact'; readonly instructions?: string }
  /** `/think [level|default]`: show the session's thinking level, set it, or (`default`) follow the agent's again. */
  | { readonly kind: 'think'; readonly level?: ThinkingLevel | null; readonly problem?: string }
  /** `/new` or `/reset`, maybe followed by a first message: the session runs it as a turn that starts a new session. */
  | { readonly kind: 'new'; readonly text: string }
  /** `/approve [id] [note]`, `/deny [id] [reason]`: a tool call of this session waiting for approval (the only one when no id). */
  | { readonly kind: 'approve' | 'deny'; readonly words: readonly string[] }
  | { readonly kind: 'unknown'; readonly command: string }
  | { readonly kind: 'message'; readonly text: string };

/** The chat's own commands, as `/help` lists them. */
export const CHAT_HELP = [
  'commands (anything else goes to the model):',
  '  /help                   this list',
  '  /status                 context usage and what it is made of',
  '  /compact [instructions] compact the session now (a checkpoint; instructions focus the summary)',
  `  /think [level]         show or set how hard the session thinks (${THINKING_LEVELS.join(', ')}; default: the agent's)`,
  '  /new [message]          start a new session (/reset does the same), then send the message if given',
  '  /approve [id] [note]    run the tool call waiting for approval (the id when several wait)',
  '  /deny [id] [reason]     refuse it: it never runs, and the model reads the reason',
  '  /quit                   leave (/exit, Ctrl-D, or Ctrl-C at the prompt)',
  'Ctrl-C while a reply is on its way cancels that turn.',
].join('\n');

/** Reads a trimmed, non-empty line. A line starting with `/` names a command, never a message. */
export function parseChatLine(line: string): ChatLine {
  if (!line.startsWith('/')) return { kind: 'message', text: line };
  if (parseResetCommand(line)) return { kind: 'new', text: line };
  const [command = '', ...rest] = line.split(/\s+/);
  const argument = rest.join(' ').trim();
  switch (command) {
    case '/help':
      return { kind: 'help' };
    case '/quit':
    case '/exit':
      return { kind: 'quit' };
    case '/status':
      return { kind: 'status' };
    case '/compact':
      return argument ? { kind: 'compact', instructions: argument } : { kind: 'compact' };
    case '/think':
    case '/thinking':
      return thinkLine(argument);
    case '/approve':
      return { kind: 'approve', words: rest.filter(Boolean) };
    case '/deny':
      return { kind: 'deny', words: rest.filter(Boolean) };
    default:
      return { kind: 'unknown', command };
  }
}

/** `/think` with its argument: no argument shows the level, `default` clears it; anything else must be a level. */
function thinkLine(argument: string): ChatLine {
  if (argument === '') return { kind: 'think' };
  if (argument === 'default') return { kind: 'think', level: null };
  if (isThinkingLevel(argument)) return { kind: 'think', level: argument };
  return {
    kind: 'think',
    problem: `/think: "${argument}" is not a level; use one of ${THINKING_LEVELS.join(', ')}, or default`,
  };
}
