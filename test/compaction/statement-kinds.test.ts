import { statementKind, statementsOf, type Speaker, type StatementKind } from '../../src/compaction/statement-kinds';
import { collectFacts, extractiveSummary } from '../../src/compaction/extractive-summary';
import { parseItem, renderItem } from '../../src/compaction/summary-items';
import { assistant, user } from './factories';

describe('statementKind', () => {
  it.each<[string, Speaker, StatementKind | undefined]>([
    // decisions, from either side
    ["Let's decide: use advisory locks per account instead of SERIALIZABLE.", 'user', 'decisions'],
    ['We decided to keep the retry budget at three attempts.', 'assistant', 'decisions'],
    ["Let's go with Postgres 16 for the new cluster.", 'user', 'decisions'],
    ['Decision: the billing cutover moves to April 2.', 'user', 'decisions'],
    ['We agreed that Marta signs off on schema changes.', 'user', 'decisions'],
    ['Use pgbouncer instead of the built-in pool.', 'user', 'decisions'],
    ["Actually, let's not use advisory locks; go back to SERIALIZABLE.", 'user', 'decisions'],
    // instructions
    ['Always run the migrations in a transaction.', 'user', 'instructions'],
    ['You should never push straight to main.', 'user', 'instructions'],
    ['From now on, tag every release with the ticket id.', 'user', 'instructions'],
    ['Please remember that deploys only happen on Tuesdays.', 'user', 'instructions'],
    ["Don't touch the production database without a ticket.", 'user', 'instructions'],
    ['For the record, the staging key rotates monthly.', 'assistant', 'instructions'],
    // preferences
    ['I prefer tabs over spaces in the generated files.', 'user', 'instructions'],
    ["I'd rather ship a smaller fix today than a big one next week.", 'user', 'instructions'],
    // tasks: commitments, requests, deadlines
    ['I will rerun the load test after lunch.', 'assistant', 'tasks'],
    ["I'll send the contract to legal myself.", 'user', 'tasks'],
    ['TODO: rotate the staging key', 'assistant', 'tasks'],
    ['Can you check the replica lag?', 'user', 'tasks'],
    ['The report is due by Friday.', 'user', 'tasks'],
    ['The audit deadline is 2026-04-15.', 'user', 'tasks'],
    // people and roles
    ['Dana Whitfield is our DBA and owns the failover runbook.', 'user', 'people'],
    ['Priya owns the billing service.', 'user', 'people'],
    ['If it breaks again, ask Tomasz.', 'user', 'people'],
    // errors and causes
    ['The deploy failed because the migration held a lock on orders.', 'assistant', 'errors'],
    ['Error: connection refused on port 6432', 'assistant', 'errors'],
    // not statements a summary keeps
    ['I will not touch the flaky test.', 'assistant', undefined],
    ["I won't be around tomorrow.", 'user', undefined],
    ['Should we use advisory locks instead of SERIALIZABLE?', 'user', undefined],
    ["Let's decide later whether we need sharding?", 'user', undefined],
    ['It never worked on my laptop either.', 'user', undefined],
    ['This is the lead paragraph of the report.', 'user', undefined],
    ['The handler always reads the queue first.', 'assistant', undefined],
    ['The tests pass locally.', 'assistant', undefined],
    ['There was an error in the logs.', 'assistant', undefined],
  ])('%s (%s) → %s', (statement, speaker, kind) => {
    expect(statementKind(statement, speaker)).toBe(kind);
  });

  it('takes instructions and preferences from the user only', () => {
    expect(statementKind('Always run the linter first.', 'assistant')).toBeUndefined();
    expect(statementKind('I prefer the second option.', 'assistant')).toBeUndefined();
  });
});

describe('statementsOf', () => {
  it('joins "Write that down." to the sentence it refers to', () => {
    expect(
      statementsOf(
        "Let's decide: use advisory locks per account instead of SERIALIZABLE. Write that down. Next, the index.",
      ),
    ).toEqual([
      "Let's decide: use advisory locks per account instead of SERIALIZABLE. Write that down.",
      'Next, the index.',
    ]);
  });
});

describe('summary items', () => {
  const at = (h: number, m: number) => Date.UTC(2026, 2, 4, h, m);

  it('carry their speaker and time, and read back unchanged', () => {
    const item = { kind: 'decisions' as const, text: "Let's go with Postgres 16.", time: at(14, 10), speaker: 'user' };
    expect(renderItem(item)).toBe("[2026-03-04 14:10] user: Let's go with Postgres 16.");
    expect(parseItem(renderItem(item), 'decisions')).toEqual(item);
    expect(parseItem('We chose Redis', 'decisions')).toEqual({ kind: 'decisions', text: 'We chose Redis' });
  });

  it('keep a repeated decision once, at its first time', () => {
    const { items } = collectFacts(
      undefined,
      [
        user("Let's go with Postgres 16.", at(9, 0)),
        assistant('Noted.', at(9, 1)),
        user("let's go with Postgres 16!", at(15, 30)),
      ],
      'strict',
    );
    expect(items.filter((i) => i.kind === 'decisions').map(renderItem)).toEqual([
      "[2026-03-04 09:00] user: Let's go with Postgres 16.",
    ]);
  });

  it('keep a decision and its later reversal, each with its time', () => {
    const out = extractiveSummary({
      messages: [
        user("Let's decide: use advisory locks per account instead of SERIALIZABLE. Write that down.", at(14, 10)),
        user("Actually, let's not use advisory locks; go back to SERIALIZABLE.", at(16, 45)),
      ],
      policy: 'strict',
    });
    expect(out).toContain(
      "## Decisions\n- [2026-03-04 14:10] user: Let's decide: use advisory locks per account instead of SERIALIZABLE. Write that down.\n" +
        "- [2026-03-04 16:45] user: Actually, let's not use advisory locks; go back to SERIALIZABLE.",
    );
  });

  it('close a task when a later line says it is done, and quote a failed tool call as an error', () => {
    const facts = collectFacts(
      undefined,
      [
        assistant('TODO: vacuum the orders table', at(10, 0)),
        {
          role: 'toolResult',
          toolCallId: 'c1',
          toolName: 'bash',
          content: [{ type: 'text', text: '\nERROR: deadlock detected\nDETAIL: …' }],
          isError: true,
          timestamp: at(10, 5),
        },
        assistant('Done: vacuum the orders table', at(10, 9)),
      ],
      'strict',
    );
    expect(facts.items.map(renderItem)).toEqual(['[2026-03-04 10:05] tool bash: ERROR: deadlock detected']);
  });
});
