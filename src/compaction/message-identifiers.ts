/**
 * The protected identifiers of a message, by where its text comes from: quoted names count in what
 * the user and the assistant wrote, not in tool-call arguments or tool output (JSON quotes every key).
 */
import { isToolCallBlock, toolCallArguments, type AgentMessage } from '../context/types';
import { extractIdentifiers, type IdentifierPolicy } from './identifiers';
import { preservedIdentifiersOf } from './quality-guard';

/** Conversation text and machine text of one message (the two are extracted differently). */
function textsOf(message: AgentMessage): { spoken: string; machine: string } {
  switch (message.role) {
    case 'user':
      return {
        spoken:
          typeof message.content === 'string'
            ? message.content
            : message.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n'),
        machine: '',
      };
    case 'assistant': {
      const spoken: string[] = [];
      const machine: string[] = [];
      for (const b of message.content) {
        if (b.type === 'text') spoken.push(b.text);
        else if (isToolCallBlock(b)) machine.push(JSON.stringify(toolCallArguments(b) ?? {}));
      }
      return { spoken: spoken.join('\n'), machine: machine.join('\n') };
    }
    case 'toolResult':
      return { spoken: '', machine: message.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n') };
  }
}

/** Identifiers of `message` under `policy`, unique, in order of appearance. */
export function messageIdentifiers(message: AgentMessage, policy: IdentifierPolicy): string[] {
  const { spoken, machine } = textsOf(message);
  return [
    ...new Set([
      ...extractIdentifiers(spoken, policy, { conversational: true }),
      ...extractIdentifiers(machine, policy),
    ]),
  ];
}

/** Identifiers of a previous summary and the messages it is merged with: what a new summary must keep. */
export function sourceIdentifiers(
  previousSummary: string | undefined,
  messages: readonly AgentMessage[],
  policy: IdentifierPolicy,
): string[] {
  const ids = new Set([
    ...preservedIdentifiersOf(previousSummary ?? ''),
    ...extractIdentifiers(previousSummary ?? '', policy, { conversational: true }),
  ]);
  for (const message of messages) for (const id of messageIdentifiers(message, policy)) ids.add(id);
  return [...ids];
}
