import { extractiveSummary } from '../../src/compaction/extractive-summary';
import { keptBySummary } from '../../src/compaction/summary-kept';
import { assistant, user } from './factories';

describe('keptBySummary', () => {
  it('reads back the identifiers and decisions an extractive summary wrote, and not its tasks', () => {
    const summary = extractiveSummary({
      messages: [
        user('Always run the migrations on db.internal:5432 before deploying.'),
        assistant('We decided to ship PAY-1234 first, from /srv/api/main.ts. I will write the changelog next.'),
      ],
      policy: 'strict',
    });
    const kept = keptBySummary(summary);
    expect(kept.identifiers).toEqual(expect.arrayContaining(['db.internal:5432', '/srv/api/main.ts']));
    expect(kept.decisions).toEqual(
      expect.arrayContaining([
        expect.stringContaining('Always run the migrations'),
        expect.stringContaining('We decided to ship PAY-1234 first'),
      ]),
    );
    expect(kept.decisions.join('\n')).not.toContain('changelog');
  });

  it('reads a model-written summary as the next compaction would, and an empty one as keeping nothing', () => {
    const model = keptBySummary('## Decisions\n- We chose Postgres over MySQL for tag v2.4.1.\n');
    expect(model.decisions).toEqual(['We chose Postgres over MySQL for tag v2.4.1.']);
    expect(model.identifiers).toContain('v2.4.1');
    expect(keptBySummary('')).toEqual({ identifiers: [], decisions: [] });
  });
});
