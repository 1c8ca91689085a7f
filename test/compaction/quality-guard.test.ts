import {
  appendPreservedIdentifiers,
  capSummary,
  checkSummaryQuality,
  guardSummary,
  PRESERVED_IDENTIFIERS_HEADING,
  preservedIdentifiersOf,
} from '../../src/compaction/quality-guard';
import { leftOutNote } from '../../src/compaction/identifier-budget';

describe('checkSummaryQuality', () => {
  it('is ok when every identifier appears verbatim', () => {
    expect(checkSummaryQuality('Moved /etc/hosts to 10.0.0.1', ['/etc/hosts', '10.0.0.1'])).toEqual({
      ok: true,
      missing: [],
      blank: false,
    });
  });

  it('lists identifiers that are missing or altered, in source order', () => {
    const r = checkSummaryQuality('Deployed to api.example.com (commit 9fceb0)', [
      '9fceb02',
      'api.example.com',
      '/srv/app',
    ]);
    expect(r).toEqual({ ok: false, missing: ['9fceb02', '/srv/app'], blank: false });
  });

  it('is not ok for a blank summary even with no identifiers', () => {
    expect(checkSummaryQuality('  \n', [])).toEqual({ ok: false, missing: [], blank: true });
  });
});

describe('appendPreservedIdentifiers', () => {
  it('returns the same string when nothing is missing', () => {
    const s = 'summary';
    expect(appendPreservedIdentifiers(s, [])).toBe(s);
  });

  it('appends a Preserved identifiers section with one line per identifier', () => {
    const out = appendPreservedIdentifiers('## Goal\nShip it.', ['/srv/app', '10.0.0.1', '/srv/app']);
    expect(out).toBe(`## Goal\nShip it.\n\n${PRESERVED_IDENTIFIERS_HEADING}\n- /srv/app\n- 10.0.0.1\n`);
    expect(checkSummaryQuality(out, ['/srv/app', '10.0.0.1']).ok).toBe(true);
  });

  it('adds to an existing section instead of creating a second one', () => {
    const s = `## Goal\nx\n\n${PRESERVED_IDENTIFIERS_HEADING}\n- a.example.com\n\n## Next\ny`;
    const out = appendPreservedIdentifiers(s, ['b.example.com']);
    expect(out.split(PRESERVED_IDENTIFIERS_HEADING)).toHaveLength(2);
    expect(out).toContain('- a.example.com\n- b.example.com\n');
    expect(out).toContain('## Next\ny');
  });
});

describe('capSummary', () => {
  const sections = Array.from({ length: 20 }, (_, i) => `## Section ${i}\n${'line of text\n'.repeat(20)}`).join('\n');

  it('returns the same string when it fits', () => {
    expect(capSummary('short', 100)).toBe('short');
  });

  it('cuts at a section boundary and marks the cut', () => {
    const out = capSummary(sections, 2_000);
    expect(out.length).toBeLessThanOrEqual(2_000);
    expect(out).toMatch(/line of text\n\[Summary cut to 2000 characters\]$/);
    expect(out).not.toMatch(/## Section \d+\n\[Summary cut/);
  });

  it('cuts at a line boundary when no section boundary is near', () => {
    const out = capSummary('word '.repeat(10) + '\n' + 'y'.repeat(500), 100);
    expect(out.length).toBeLessThanOrEqual(100);
    expect(out.startsWith('word word')).toBe(true);
    expect(out).not.toContain('yy');
  });

  it('never cuts off the Preserved identifiers section', () => {
    const ids = Array.from({ length: 30 }, (_, i) => `- /srv/data/file-${i}.json`).join('\n');
    const text = `${sections}\n${PRESERVED_IDENTIFIERS_HEADING}\n${ids}\n`;
    const out = capSummary(text, 3_000);
    expect(out.length).toBeLessThanOrEqual(3_000);
    expect(out).toContain(`${PRESERVED_IDENTIFIERS_HEADING}\n${ids}`);
    expect(out).toContain('## Section 0');
  });

  it('bounds a model-written identifier section to its own budget: the newest kept, a note, and at least half the cap for the text', () => {
    const ids = Array.from({ length: 400 }, (_, i) => `/srv/data/file-${i}.json`);
    const text = `${sections}\n${PRESERVED_IDENTIFIERS_HEADING}\n${ids.map((id) => `- ${id}`).join('\n')}\n`;
    const out = capSummary(text, 2_000, 3_000);
    const kept = preservedIdentifiersOf(out);
    expect(kept.length).toBeGreaterThan(50);
    expect(kept).toEqual(ids.slice(ids.length - kept.length));
    expect(out).toContain(leftOutNote(ids.length - kept.length));
    const section = out.slice(out.indexOf(PRESERVED_IDENTIFIERS_HEADING));
    expect(section.length).toBeLessThanOrEqual(
      3_000 + PRESERVED_IDENTIFIERS_HEADING.length + leftOutNote(400).length + 2,
    );
    // The identifiers alone exceed the 2,000-character cap, yet the text keeps half of it.
    const prose = out.slice(0, out.indexOf(PRESERVED_IDENTIFIERS_HEADING));
    expect(prose).toContain('## Section 0');
    expect(prose).toContain('[Summary cut to 2000 characters]');
    expect(prose.length).toBeGreaterThan(500);
    expect(prose.length).toBeLessThanOrEqual(1_000 + 2);
  });

  it('keeps the whole identifier section even when it alone exceeds the cap', () => {
    const ids = Array.from({ length: 50 }, (_, i) => `- /srv/data/file-${i}.json`).join('\n');
    const out = capSummary(`${sections}\n${PRESERVED_IDENTIFIERS_HEADING}\n${ids}`, 500);
    expect(out).toContain(ids);
    expect(out).not.toContain('## Section 0');
  });
});

describe('guardSummary', () => {
  it('appends lost identifiers and caps without dropping them', () => {
    const long = `## Notes\n${'detail line\n'.repeat(300)}`;
    const r = guardSummary(long, ['/srv/app/main.ts', 'db.internal:5432'], 1_000);
    expect(r.appended).toEqual(['/srv/app/main.ts', 'db.internal:5432']);
    expect(r.summary.length).toBeLessThanOrEqual(1_000);
    expect(checkSummaryQuality(r.summary, ['/srv/app/main.ts', 'db.internal:5432']).ok).toBe(true);
    expect(r.blank).toBe(false);
  });

  it('requires and appends only the newest identifiers within their budget, and says how many older ones were left out', () => {
    const ids = Array.from({ length: 5_000 }, (_, i) => `order-${String(i).padStart(6, '0')}.example.com`);
    const r = guardSummary('## Goal\nProcess the orders.', ids, 16_000, undefined, 20_000);
    const kept = preservedIdentifiersOf(r.summary);
    // Each listed line is 27 characters ("- " + 24 + newline): 740 fit in 20,000.
    expect(kept).toEqual(ids.slice(5_000 - 740));
    expect(r.appended).toEqual(kept);
    expect(r.summary).toContain(leftOutNote(5_000 - 740));
    expect(r.summary).toContain('## Goal\nProcess the orders.');
    expect(r.summary.length).toBeLessThan(16_000 / 2 + 20_000 + 200);
    // Unbounded (the default), every identifier is still required.
    expect(guardSummary('## Goal', ids.slice(0, 50), 16_000).appended).toHaveLength(50);
  });

  it('notes left-out identifiers even when the summary kept all the newest ones in its text', () => {
    const ids = ['a.example.com', 'b.example.com', 'c.example.com'];
    const r = guardSummary('Worked on b.example.com and c.example.com.', ids, 16_000, undefined, 32);
    expect(r.appended).toEqual([]);
    expect(r.summary).toBe(
      `Worked on b.example.com and c.example.com.\n\n${PRESERVED_IDENTIFIERS_HEADING}\n${leftOutNote(1)}\n`,
    );
  });

  it('reports a blank summary', () => {
    expect(guardSummary('', []).blank).toBe(true);
  });

  const facts = {
    lastRequest: 'Ship the PAY-1234 fix to staging',
    items: [
      { kind: 'tasks', text: 'TODO: rotate the staging key', time: Date.UTC(2026, 2, 4, 14, 5), speaker: 'assistant' },
      {
        kind: 'instructions',
        text: 'Please remember that deploys only happen on Tuesdays.',
        time: Date.UTC(2026, 2, 4, 14, 10),
        speaker: 'user',
      },
      {
        kind: 'decisions',
        text: "Let's decide: use advisory locks per account instead of SERIALIZABLE. Write that down.",
        time: Date.UTC(2026, 2, 4, 14, 12),
        speaker: 'user',
      },
    ],
  } as const;

  it('adds the sections a model summary left out, first, from the facts, each item with its time', () => {
    const r = guardSummary('## Goal\nFix payments.\n\n## Progress\nPatched the handler.', [], 16_000, facts);
    expect(r.addedSections).toEqual([
      '## Last user request',
      '## Decisions',
      '## Instructions and preferences',
      '## Open tasks',
    ]);
    expect(r.summary.startsWith('## Last user request\nShip the PAY-1234 fix to staging')).toBe(true);
    expect(r.summary).toContain('- [2026-03-04 14:05] assistant: TODO: rotate the staging key');
    expect(r.summary).toContain(
      '## Instructions and preferences\n- [2026-03-04 14:10] user: Please remember that deploys only happen on Tuesdays.',
    );
    expect(r.summary).toContain(
      "## Decisions\n- [2026-03-04 14:12] user: Let's decide: use advisory locks per account instead of SERIALIZABLE. Write that down.",
    );
    expect(r.summary).toContain('## Goal\nFix payments.');
  });

  it('leaves sections the summary has alone, but quotes with their times the decisions and instructions it paraphrased', () => {
    const model =
      '## Last request\nShip the fix.\n\n## Open tasks\n- rotate key\n\n## Decisions\n- Deploys are weekly; per-account locks.\n\n## Constraints\n- none';
    const r = guardSummary(model, [], 16_000, facts);
    expect(r.addedSections).toEqual(['## Decisions and instructions (verbatim)']);
    expect(r.unkept).toEqual([
      'user: Please remember that deploys only happen on Tuesdays.'.replace(/^/, '[2026-03-04 14:10] '),
      "[2026-03-04 14:12] user: Let's decide: use advisory locks per account instead of SERIALIZABLE. Write that down.",
    ]);
    expect(r.summary).toContain('- [2026-03-04 14:10] user: Please remember that deploys only happen on Tuesdays.');
    expect(r.summary).toContain('## Last request\nShip the fix.');
    // Quoted (case and punctuation aside), nothing is added.
    const quoting = `${model}\n- please remember that deploys only happen on tuesdays\n- Let's decide: use advisory locks per account instead of SERIALIZABLE — write that down.`;
    expect(guardSummary(quoting, [], 16_000, facts)).toMatchObject({ addedSections: [], unkept: [] });
  });

  it('gives the sections it adds at most half the budget, leaving out routine requests before decisions, so the summary keeps its own text', () => {
    const requests = Array.from({ length: 200 }, (_, i) => ({
      kind: 'tasks' as const,
      text: `Please look at /srv/orders/order-${i}.json and tell me its status.`,
      time: Date.UTC(2026, 2, 4, 15, 0),
      speaker: 'user',
    }));
    const many = { ...facts, items: [...facts.items, ...requests] };
    const r = guardSummary(
      '## Goal\nShip the orders report.\n\n## Progress\nEvery order had shipped.',
      [],
      4_000,
      many,
    );
    expect(r.summary.length).toBeLessThanOrEqual(4_000);
    expect(r.summary).toContain('Every order had shipped.');
    expect(r.summary).not.toContain('[Summary cut');
    expect(r.summary).toContain(
      "user: Let's decide: use advisory locks per account instead of SERIALIZABLE. Write that down.",
    );
    expect(r.summary).toContain('order-199.json');
    expect(r.summary).not.toContain('order-0.json');
  });

  it('adds nothing to a blank summary (the caller falls back to the extractive one)', () => {
    expect(guardSummary(' ', [], 16_000, facts)).toMatchObject({ blank: true, addedSections: [], unkept: [] });
  });
});
