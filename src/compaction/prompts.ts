/**
 * Summarization prompts: what the summarizer is asked for each chunk, for the merge of partial
 * summaries, and under each identifier policy. Plain strings, so a workflow can pass them to an
 * activity and a compaction provider gets exactly the same instructions.
 */
import type { IdentifierPolicy } from './identifiers';
import { SUBAGENTS_IN_FLIGHT_HEADING } from './subagents-in-flight';

/** What every summary must keep (OpenClaw's merge instructions, and what people said: Keel). */
const MUST_KEEP = [
  'active tasks and their status (done, in progress, blocked)',
  'batch progress (e.g. "processed 40 of 120 files")',
  'the last user request, close to verbatim',
  'decisions made and their rationale, including ones later reversed (keep both, with times)',
  'instructions and preferences (always / never / remember / write that down / from now on / I prefer), word for word',
  "the user's open requests and commitments, and the follow-ups the assistant promised, with their deadlines",
  'people and their roles, dates and numbers',
  'errors and their causes',
  'TODOs, open questions and constraints',
];

/** The "## " sections every summary has, in order (the extractive summary writes the same ones). */
const SECTIONS =
  'Goal; Last user request; Decisions (with rationale); Instructions and preferences; Open tasks (requests, ' +
  "commitments and deadlines, the user's and the assistant's); People and roles; Errors and causes; Progress " +
  '(done / in progress / blocked); Critical context';

/** Statements are quoted with the time of the message that said them, as the conversation shows it. */
const QUOTE_WITH_TIMES =
  'Under Decisions, Instructions and preferences, Open tasks, People and roles, and Errors and causes, write one ' +
  'bullet per statement as "- [YYYY-MM-DD HH:MM] speaker: statement", quoting decisions, instructions and ' +
  'preferences word for word with the time shown before the message that said them; carry forward such ' +
  'bullets of the previous summary unchanged unless they were reversed or finished.';

/** The system prompt for every summarizer call. */
export const SUMMARIZER_SYSTEM_PROMPT =
  'You write context checkpoint summaries of agent conversations. Another model continues the work from ' +
  'your summary alone. Never continue the conversation, never answer its questions; only summarize it.';

/** The instruction sentence for an identifier policy (`custom` brings its own text). */
export function identifierPolicyInstruction(policy: IdentifierPolicy): string {
  if (policy === 'off') return '';
  if (policy === 'strict') {
    return (
      'Preserve identifiers exactly as written, character for character: UUIDs, hashes, ids, ticket and ' +
      'issue ids, version numbers, names given in quotes, hostnames, IP addresses, ports, URLs, file paths ' +
      'and file names. Never shorten, reformat or paraphrase them.'
    );
  }
  return policy.instructions ?? '';
}

/** Options that shape the instructions of every chunk and merge call. */
export interface SummaryInstructionOptions {
  readonly identifierPolicy: IdentifierPolicy;
  /** Extra focus from the user (`/compact <instructions>`) or configuration. */
  readonly customInstructions?: string;
}

/**
 * Re-distillation: a later compaction sends the previous summary plus only the entries since the
 * last cut, never the whole history, so the summarizer's input stays bounded.
 */
export const REDISTILL_INSTRUCTION =
  'A previous summary is given: write ONE new summary of the previous summary plus the new conversation. ' +
  'Carry forward what still matters, update task status, drop what is finished and irrelevant, and prefer ' +
  'the newer information when they conflict. Do not copy the previous summary verbatim; the earlier ' +
  'history is not available beyond it.';

/** How the chunk instructions name the conversation they summarize (sent after it, it is "above"). */
const CONVERSATION_BELOW = 'Summarize the conversation below';

/** The instructions for summarizing one chunk (passed to `summarizeChunk` as `instructions`). */
export function chunkSummaryInstructions(options: SummaryInstructionOptions): string {
  return joinParagraphs([
    `${CONVERSATION_BELOW} into a structured checkpoint with these "## " sections: ${SECTIONS}.`,
    `Keep: ${MUST_KEEP.join('; ')}.`,
    QUOTE_WITH_TIMES,
    'Entries shown as "[Large … omitted from summary]" were too large to include; mention that they existed.',
    identifierPolicyInstruction(options.identifierPolicy),
    options.customInstructions ? `Additional focus: ${options.customInstructions}` : '',
  ]);
}

/** The instructions for merging partial summaries into one (passed to `summarizeChunk` as `instructions`). */
export function mergeSummaryInstructions(options: SummaryInstructionOptions): string {
  return joinParagraphs([
    'The text below holds partial summaries of consecutive parts of one conversation, labelled from ' +
      `oldest to most recent. Merge them into ONE structured checkpoint summary with the same "## " sections (${SECTIONS}).`,
    `Keep: ${MUST_KEEP.join('; ')}.`,
    QUOTE_WITH_TIMES,
    'Prefer the most recent part when parts disagree; a task done in a later part is done.',
    identifierPolicyInstruction(options.identifierPolicy),
    options.customInstructions ? `Additional focus: ${options.customInstructions}` : '',
  ]);
}

function utc(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
}

/**
 * A chunk's label: `Part 1 of 3 (oldest), 2026-03-01 10:00 UTC – 2026-03-01 12:30 UTC`.
 * Time range only when the chunk's messages carry timestamps.
 */
export function chunkLabel(index: number, total: number, fromTimestamp?: number, toTimestamp?: number): string {
  const position = total <= 1 ? '' : index === 0 ? ' (oldest)' : index === total - 1 ? ' (most recent)' : '';
  const range =
    fromTimestamp !== undefined && toTimestamp !== undefined ? `, ${utc(fromTimestamp)} – ${utc(toTimestamp)}` : '';
  return `Part ${index + 1} of ${total}${position}${range}`;
}

/**
 * The user prompt of one summarizer call: the previous summary (context for re-distillation), the
 * conversation text in tags, the instructions, and the re-distillation rule when there is a previous summary.
 */
export function buildSummarizePrompt(
  chunkText: string,
  previousSummary: string | undefined,
  instructions: string,
): string {
  const parts: string[] = [];
  const redistill = Boolean(previousSummary?.trim());
  if (redistill) parts.push(`<previous-summary>\n${previousSummary}\n</previous-summary>`);
  parts.push(`<conversation>\n${chunkText}\n</conversation>`);
  parts.push(instructions);
  if (redistill) parts.push(REDISTILL_INSTRUCTION);
  return parts.join('\n\n');
}

/** Where the summary asked after the conversation stops: the kept tail's first message, when there is one. */
export interface SummaryAfterConversation {
  /** The opening words of the first message the compaction keeps verbatim (the summary ends before it). */
  readonly keptFrom?: string;
  /** The conversation opens with the previous compaction's summary: fold it in (re-distillation). */
  readonly redistill: boolean;
  /** That summary lists the subagents that were running then: a list Keel writes anew, never carried. */
  readonly staleSubagents?: boolean;
}

/**
 * The user message that asks for the summary at the end of the conversation itself (the summary on
 * the conversation's own prompt cache): the chunk instructions, their sections and identifier and
 * decision rules unchanged, said of the conversation above, and why it must not be continued.
 */
export function summaryAfterConversationPrompt(instructions: string, where: SummaryAfterConversation): string {
  const upTo = where.keptFrom
    ? ` up to the message that begins "${where.keptFrom}" (not included: that message and the ones after it stay in the context word for word)`
    : '';
  return joinParagraphs([
    '<summary-request>',
    'This message is not part of the conversation. Stop the conversation here: do not continue it, do not answer ' +
      `its questions and do not call tools. Write a context checkpoint summary of the conversation above${upTo}. ` +
      'Another model continues the work from your summary alone; answer with the summary only.',
    instructions.replace(CONVERSATION_BELOW, 'Summarize the conversation above'),
    where.redistill
      ? REDISTILL_INSTRUCTION.replace('A previous summary is given', 'The conversation opens with a previous summary')
      : '',
    where.staleSubagents
      ? `Leave out its "${SUBAGENTS_IN_FLIGHT_HEADING}" list and the subagents it names: Keel adds the ones still running.`
      : '',
    '</summary-request>',
  ]);
}

/** The text merged by the merge call: each partial summary under its label, oldest first. */
export function buildMergeInput(partials: ReadonlyArray<{ label: string; summary: string }>): string {
  return partials.map((p) => `### ${p.label}\n${p.summary.trim()}`).join('\n\n');
}

function joinParagraphs(parts: readonly string[]): string {
  return parts.filter((p) => p.length > 0).join('\n\n');
}
