import { EXTRACTIVE_SUMMARY_HEADER, extractiveSummary } from '../../src/compaction/extractive-summary';
import { PRESERVED_IDENTIFIERS_HEADING, preservedIdentifiersOf } from '../../src/compaction/quality-guard';
import { leftOutNote } from '../../src/compaction/identifier-budget';
import type { AgentMessage } from '../../src/context/types';
import { assistant, call, result, user } from './factories';

const conversation: AgentMessage[] = [
  user('Please migrate the users table. TODO: backfill the email column'),
  assistant('We decided to use PGlite for tests because it needs no server. I will write the migration next.'),
  call(['c1']),
  result('c1', 'connected to db.internal:5432, config at /srv/app/config.yaml', {
    secret: 'DETAILS-ONLY /secret/path',
  }),
  assistant('- [ ] add an index on email\nDone: backfill the email column'),
  user('Now deploy it to https://deploy.example.com/app please'),
];

describe('extractiveSummary', () => {
  const summary = extractiveSummary({ messages: conversation, policy: 'strict' });

  it('starts by saying it is a degraded extractive summary', () => {
    expect(summary.split('\n')[0]).toBe(EXTRACTIVE_SUMMARY_HEADER);
  });

  it('quotes the last user request verbatim', () => {
    expect(summary).toContain('## Last user request\nNow deploy it to https://deploy.example.com/app please');
  });

  it('lists open tasks and promises, not those later marked done', () => {
    const tasks = summary.split('## Open tasks\n')[1].split('\n\n')[0];
    expect(tasks).toContain('[ ] add an index on email');
    expect(tasks).toContain('I will write the migration next.');
    expect(tasks).not.toContain('backfill');
  });

  it('does not take a refusal ("I will not…") for a promise', () => {
    const out = extractiveSummary({ messages: [assistant('I will not touch the flaky test.')], policy: 'strict' });
    expect(out).not.toContain('## Open tasks');
  });

  it('lists what the user asked to be remembered as an instruction, and keeps ticket ids, versions and quoted names', () => {
    const s = extractiveSummary({
      messages: [
        user('Please remember that the ticket is PAY-1234. We call the rollout "Project Falcon" and pin v2.3.1.'),
        assistant('Noted. I will open a branch for OPS-77.'),
        result('c9', '{"name": "falcon", "status": "ok"}'),
      ],
      policy: 'strict',
    });
    const instructions = s.split('## Instructions and preferences\n')[1].split('\n\n')[0];
    expect(instructions).toContain('- user: Please remember that the ticket is PAY-1234.');
    const ids = s.split(`${PRESERVED_IDENTIFIERS_HEADING}\n`)[1];
    for (const id of ['PAY-1234', '"Project Falcon"', 'v2.3.1', 'OPS-77']) expect(ids).toContain(`- ${id}\n`.trimEnd());
    // JSON in tool output is not a quoted name.
    expect(ids).not.toContain('- falcon');
  });

  it('lists decisions', () => {
    expect(summary).toContain(
      '## Decisions\n- assistant: We decided to use PGlite for tests because it needs no server.',
    );
  });

  it('keeps every identifier of the messages, but nothing from tool-result details', () => {
    const ids = summary.split(`${PRESERVED_IDENTIFIERS_HEADING}\n`)[1];
    for (const id of ['db.internal:5432', '/srv/app/config.yaml', 'https://deploy.example.com/app'])
      expect(ids).toContain(`- ${id}`);
    expect(summary).not.toContain('/secret/path');
  });

  it('counts what was summarized', () => {
    expect(summary).toContain('- This compaction: 6 messages (2 user, 3 assistant, 1 tool results).');
    expect(summary).toContain('- In total: 6 messages over 1 compactions.');
  });

  it('is deterministic', () => {
    expect(extractiveSummary({ messages: conversation, policy: 'strict' })).toBe(summary);
  });

  it('re-distils: carries identifiers, tasks and decisions of the previous summary, without duplicates', () => {
    const next = extractiveSummary({
      previousSummary: summary,
      messages: [user('Check 10.1.2.3 too'), assistant('Done: add an index on email')],
      policy: 'strict',
    });
    for (const id of ['db.internal:5432', '/srv/app/config.yaml', 'https://deploy.example.com/app', '10.1.2.3']) {
      expect(next).toContain(`- ${id}`);
      expect(next.split(`- ${id}`).length).toBe(2);
    }
    expect(next).toContain('We decided to use PGlite');
    expect(next.split('We decided to use PGlite').length).toBe(2);
    expect(next).not.toContain('[ ] add an index on email');
    expect(next.split('I will write the migration next.').length).toBe(2);
    expect(next).toContain('## Last user request\nCheck 10.1.2.3 too');
    expect(next).toContain('- In total: 8 messages over 2 compactions.');
  });

  it('reads identifiers and decisions out of a model-written previous summary', () => {
    const next = extractiveSummary({
      previousSummary:
        '## Goal\nShip v2 to build-7.corp.internal\n## Key Decisions\n- We chose Redis at cache.internal:6379',
      messages: [user('ok')],
      policy: 'strict',
    });
    expect(next).toContain('- build-7.corp.internal');
    expect(next).toContain('- cache.internal:6379');
    expect(next).toContain('We chose Redis');
  });

  it('carries forward, with their times, the statements the guard quoted into a model summary', () => {
    const model =
      "## Decisions and instructions (verbatim)\n- [2026-03-04 14:10] user: Let's decide: use advisory locks per account.\n- [2026-03-04 14:12] user: Squash every pull request.\n\n## Goal\nFix the race.";
    const next = extractiveSummary({ previousSummary: model, messages: [user('ok')], policy: 'strict' });
    expect(next).toContain(
      "## Decisions\n- [2026-03-04 14:10] user: Let's decide: use advisory locks per account.\n- [2026-03-04 14:12] user: Squash every pull request.",
    );
  });

  it('drops the oldest low-value items first, decisions and instructions last', () => {
    const at = (m: number) => Date.UTC(2026, 2, 4, 9, m);
    const msgs: AgentMessage[] = [
      user('From now on, always squash pull requests.', at(0)),
      assistant('We decided to use the blue cluster.', at(1)),
    ];
    for (let i = 0; i < 30; i++)
      msgs.push(assistant(`I'll look at log file number ${i} next, line by line and carefully.`, at(2 + i)));
    const out = extractiveSummary({ messages: msgs, policy: 'off', maxChars: 1_200 });
    expect(out.length).toBeLessThanOrEqual(1_200);
    expect(out).toContain('[2026-03-04 09:00] user: From now on, always squash pull requests.');
    expect(out).toContain('[2026-03-04 09:01] assistant: We decided to use the blue cluster.');
    expect(out).toContain('log file number 29 ');
    expect(out).not.toContain('log file number 0 ');
  });

  it('drops older decisions first to fit the cap, never identifiers', () => {
    const msgs: AgentMessage[] = [];
    for (let i = 0; i < 40; i++)
      msgs.push(assistant(`We decided on option ${i} for host-${i}.example.com ${'because '.repeat(10)}`));
    const out = extractiveSummary({ messages: msgs, policy: 'strict', maxChars: 3_000 });
    expect(out.length).toBeLessThanOrEqual(3_000);
    for (let i = 0; i < 40; i++) expect(out).toContain(`host-${i}.example.com`);
    expect(out).toContain('We decided on option 39');
    expect(out).not.toContain('We decided on option 0 ');
  });

  it('lists identifiers compactly and says so when they alone exceed the cap', () => {
    const msgs = Array.from({ length: 60 }, (_, i) => user(`see /data/archive/part-${i}/file.json`));
    const out = extractiveSummary({ messages: msgs, policy: 'strict', maxChars: 500 });
    for (let i = 0; i < 60; i++) expect(out).toContain(`/data/archive/part-${i}/file.json`);
    expect(out).toContain('identifiers exceed the 500-char cap');
    // and the next compaction still reads them back
    const next = extractiveSummary({ previousSummary: out, messages: [], policy: 'strict', maxChars: 500 });
    for (let i = 0; i < 60; i++) expect(next).toContain(`/data/archive/part-${i}/file.json`);
  });

  it('lists only the newest identifiers within their budget, keeps the other sections, and stays bounded over stacked compactions', () => {
    const msgs: AgentMessage[] = Array.from({ length: 3_000 }, (_, i) =>
      user(`Please check /data/orders/order-${i}.json`),
    );
    msgs.push(assistant('We decided to ship on Friday.'));
    const out = extractiveSummary({ messages: msgs, policy: 'strict', maxChars: 4_000, maxIdentifierChars: 10_000 });
    const kept = preservedIdentifiersOf(out);
    expect(kept.at(-1)).toBe('/data/orders/order-2999.json');
    expect(kept).not.toContain('/data/orders/order-0.json');
    expect(out).toContain(leftOutNote(3_000 - kept.length));
    expect(out).toContain('## Decisions\n- assistant: We decided to ship on Friday.');
    expect(out).toContain('/data/orders/order-2999.json');
    expect(out).not.toContain('listed compactly');
    expect(out.length).toBeLessThanOrEqual(4_000 / 2 + 10_000 + 400);
    // The next compaction reads the kept ones back and adds new ones without growing past the bound.
    const next = extractiveSummary({
      previousSummary: out,
      messages: [user('and /data/orders/order-new.json')],
      policy: 'strict',
      maxChars: 4_000,
      maxIdentifierChars: 10_000,
    });
    expect(preservedIdentifiersOf(next).at(-1)).toBe('/data/orders/order-new.json');
    expect(next.length).toBeLessThanOrEqual(out.length + 100);
  });

  it('lists no identifiers under policy off', () => {
    expect(extractiveSummary({ messages: conversation, policy: 'off' })).not.toContain(PRESERVED_IDENTIFIERS_HEADING);
  });
});
