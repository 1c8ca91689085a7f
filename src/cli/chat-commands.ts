import { parseResetCommand } from '../sessions/lifecycle';

/** What one typed line asks the chat for: a local command, or a message for the model. */
export type ChatLine =
  | { readonly kind: 'help' }
  | { readonly kind: 'quit' }
  | { readonly kind: 'status' }
  | { readonly kind: 'compact'; readonly instructions?: string }
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
    case '/approve':
      return { kind: 'approve', words: rest.filter(Boolean) };
    case '/deny':
      return { kind: 'deny', words: rest.filter(Boolean) };
    default:
      return { kind: 'unknown', command };
  }
}
