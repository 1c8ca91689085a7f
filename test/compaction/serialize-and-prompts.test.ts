import {
  buildMergeInput,
  buildSummarizePrompt,
  chunkLabel,
  chunkSummaryInstructions,
  identifierPolicyInstruction,
  mergeSummaryInstructions,
  REDISTILL_INSTRUCTION,
  summaryAfterConversationPrompt,
} from '../../src/compaction/prompts';
import { serializeEntriesForSummary, serializeForSummary } from '../../src/compaction/serialize-for-summary';
import type { AssistantMessage } from '../../src/context/types';
import { call, result, user } from './factories';

describe('serializeForSummary', () => {
  const thinking: AssistantMessage = {
    role: 'assistant',
    content: [
      { type: 'thinking', thinking: 'PRIVATE-THOUGHT' },
      { type: 'text', text: 'Reading it.' },
    ],
  };
  const msgs = [
    user('read /etc/hosts'),
    thinking,
    call(['c1']),
    { ...result('c1', 'file body', { raw: 'DETAILS-BLOB' }), isError: true },
  ];

  it('renders each message as a labelled block, with tool calls and results', () => {
    expect(serializeForSummary(msgs)).toBe(
      '[User]: read /etc/hosts\n\n[Assistant]: Reading it.\n\n[Assistant tool call read]: {"path":"/f/c1"}\n\n[Tool result read (error)]: file body',
    );
  });

  it('never includes thinking or tool-result details', () => {
    const out = serializeForSummary(msgs);
    expect(out).not.toContain('PRIVATE-THOUGHT');
    expect(out).not.toContain('DETAILS-BLOB');
  });

  it('replaces a message by its note', () => {
    const out = serializeForSummary(msgs, {
      noteFor: (_m, i) => (i === 3 ? '[Large toolResult (~120K tokens) omitted from summary]' : undefined),
    });
    expect(out.endsWith('\n\n[Large toolResult (~120K tokens) omitted from summary]')).toBe(true);
    expect(out).not.toContain('file body');
  });

  it('renders planned entries with or without their oversized notes', () => {
    const es = [
      { id: 'a', message: user('hi') },
      { id: 'b', message: result('c', 'HUGE') },
    ];
    const oversized = [{ entryId: 'b', tokens: 9, note: '[Large toolResult (~9 tokens) omitted from summary]' }];
    expect(serializeEntriesForSummary(es, oversized, 'full')).toContain('HUGE');
    expect(serializeEntriesForSummary(es, oversized, 'withoutOversized')).toBe(
      '[User]: hi\n\n[Large toolResult (~9 tokens) omitted from summary]',
    );
  });

  it('prefixes planned entries with their UTC time when their messages carry one, so a summary can quote it', () => {
    const es = [
      { id: 'a', message: user("Let's go with Postgres 16.", Date.UTC(2026, 2, 4, 14, 10)) },
      { id: 'b', message: user('no time') },
    ];
    expect(serializeEntriesForSummary(es, [], 'full')).toBe(
      "[2026-03-04 14:10] [User]: Let's go with Postgres 16.\n\n[User]: no time",
    );
    // History tools render single messages without times.
    expect(serializeForSummary([es[0]!.message])).toBe("[User]: Let's go with Postgres 16.");
  });
});

describe('prompts', () => {
  it('labels chunks oldest … most recent with UTC time ranges', () => {
    const t = Date.UTC(2026, 2, 1, 10, 0);
    expect(chunkLabel(0, 3, t, t + 3_600_000)).toBe(
      'Part 1 of 3 (oldest), 2026-03-01 10:00 UTC – 2026-03-01 11:00 UTC',
    );
    expect(chunkLabel(1, 3)).toBe('Part 2 of 3');
    expect(chunkLabel(2, 3)).toBe('Part 3 of 3 (most recent)');
    expect(chunkLabel(0, 1)).toBe('Part 1 of 1');
  });

  it.each<[string, Parameters<typeof identifierPolicyInstruction>[0], RegExp]>([
    [
      'strict names every kind',
      'strict',
      /UUIDs, hashes, ids, ticket and issue ids, version numbers, names given in quotes, hostnames, IP addresses, ports, URLs, file paths and file names/,
    ],
    ['off says nothing', 'off', /^$/],
    [
      'custom uses its own text',
      { mode: 'custom', instructions: 'Keep ticket ids like T-1.' },
      /^Keep ticket ids like T-1\.$/,
    ],
  ])('identifier policy: %s', (_name, policy, expected) => {
    expect(identifierPolicyInstruction(policy)).toMatch(expected);
  });

  it('asks chunk and merge summaries to keep what the OpenClaw merge instructions list', () => {
    for (const text of [
      chunkSummaryInstructions({ identifierPolicy: 'strict' }),
      mergeSummaryInstructions({ identifierPolicy: 'strict' }),
    ]) {
      for (const must of [
        'active tasks',
        'batch progress',
        'last user request',
        'decisions',
        'rationale',
        'TODOs',
        'open questions',
        'constraints',
        'promised',
      ]) {
        expect(text).toContain(must);
      }
      // What people said, in the sections the extractive summary writes, quoted with times.
      for (const section of [
        'Decisions',
        'Instructions and preferences',
        'Open tasks',
        'People and roles',
        'Errors and causes',
      ])
        expect(text).toContain(section);
      expect(text).toContain('"- [YYYY-MM-DD HH:MM] speaker: statement"');
      expect(text).toContain('later reversed (keep both, with times)');
    }
    expect(mergeSummaryInstructions({ identifierPolicy: 'off' })).toMatch(/most recent/);
  });

  it('re-distils: the prompt holds the previous summary and the new conversation only', () => {
    const prompt = buildSummarizePrompt('[User]: new', 'OLD SUMMARY', 'INSTRUCTIONS');
    expect(prompt).toBe(
      `<previous-summary>\nOLD SUMMARY\n</previous-summary>\n\n<conversation>\n[User]: new\n</conversation>\n\nINSTRUCTIONS\n\n${REDISTILL_INSTRUCTION}`,
    );
    expect(buildSummarizePrompt('[User]: new', undefined, 'I')).toBe(
      '<conversation>\n[User]: new\n</conversation>\n\nI',
    );
  });

  it('asks after the conversation with the chunk instructions unchanged but for where the conversation is', () => {
    const instructions = chunkSummaryInstructions({
      identifierPolicy: 'strict',
      customInstructions: 'Focus on the rollout.',
    });
    const asked = summaryAfterConversationPrompt(instructions, {
      keptFrom: 'thanks, one more question',
      redistill: true,
      staleSubagents: true,
    });
    expect(asked.startsWith('<summary-request>')).toBe(true);
    expect(asked.endsWith('</summary-request>')).toBe(true);
    expect(asked).toContain(
      instructions.replace('Summarize the conversation below', 'Summarize the conversation above'),
    );
    expect(asked).not.toContain('conversation below');
    expect(asked).toContain('up to the message that begins "thanks, one more question" (not included');
    expect(asked).toContain('The conversation opens with a previous summary: write ONE new summary');
    expect(asked).toContain('Leave out its "## Subagents in flight" list');
    const plain = summaryAfterConversationPrompt(instructions, { redistill: false });
    expect(plain).not.toMatch(/up to the message|opens with a previous summary|Subagents in flight/);
  });

  it('builds the merge input from labelled partials, oldest first', () => {
    expect(
      buildMergeInput([
        { label: 'Part 1 of 2 (oldest)', summary: 'a' },
        { label: 'Part 2 of 2 (most recent)', summary: 'b' },
      ]),
    ).toBe('### Part 1 of 2 (oldest)\na\n\n### Part 2 of 2 (most recent)\nb');
  });
});
