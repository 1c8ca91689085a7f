import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { COMPACTION_STORE_STEPS, withLivenessHeartbeat } from '../../activities/parts/liveness-heartbeat';
import { holdInHeartbeat } from '../../activities/parts/held-details';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('withLivenessHeartbeat', () => {
  it('beats while a named step runs, carries what the attempt holds, and stops when it settles', async () => {
    const beats: unknown[] = [];
    const ctx = {
      info: { isLocal: false, heartbeatDetails: 'from the last attempt' },
      heartbeat: (details?: unknown) => beats.push(details),
    };
    const activities = withLivenessHeartbeat(
      {
        slowWrite: async () => {
          await sleep(120);
          holdInHeartbeat(ctx, 'held reply');
          await sleep(120);
          return 'written';
        },
        other: async () => {
          await sleep(120);
          return 'unwrapped';
        },
      },
      ['slowWrite'],
      40,
      () => ctx,
    );
    expect(await activities.slowWrite()).toBe('written');
    // Timer beats first carry the details the attempt started with, then the ones it holds.
    expect(beats.length).toBeGreaterThanOrEqual(4);
    expect(beats[0]).toBe('from the last attempt');
    expect(beats.at(-1)).toBe('held reply');
    const afterSettled = beats.length;
    await sleep(120);
    expect(beats.length).toBe(afterSettled);

    beats.length = 0;
    expect(await activities.other()).toBe('unwrapped');
    expect(beats).toEqual([]);
  });

  it("names every activity the compaction workflow's store proxy calls", () => {
    const dir = join(__dirname, '../../workflows');
    const called = new Set<string>();
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
      const text = readFileSync(join(dir, file), 'utf8');
      if (!/\bstore\s*=\s*wf\.proxyActivities|from '\.\/compaction-steps'/.test(text)) continue;
      for (const m of text.matchAll(/\bstore\.(\w+)\(/g)) called.add(m[1]!);
    }
    expect(called.size).toBeGreaterThan(5);
    expect([...called].filter((name) => !(COMPACTION_STORE_STEPS as readonly string[]).includes(name))).toEqual([]);
  });
});
