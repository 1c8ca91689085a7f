import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configFromEnv } from '../../src/config/keel-config';
import {
  parseReplayPolicy,
  readReplayPolicy,
  ReplayPolicyError,
  currentReplayPolicy,
  type ReplayPolicy,
} from '../../src/replay/replay-policy';
import { runReplay } from '../../src/replay/replay-report';
import { replaySession } from '../../src/replay/replay-session';
import { fileTranscript } from '../../src/replay/replay-source';
import { renderReplayText } from '../../src/replay/replay-terminal';
import { renderReplayHtml } from '../../src/replay/replay-html';
import { effectiveReserveTokens, reserveForWindow } from '../../src/context/context-window';
import { keel } from '../support/keel-cli';
import { fakeReply, startFakeAnthropic, type FakeAnthropic } from '../../src/testing';
import { goodSummarizer } from '../compaction-workflow/support';
import { summarizerModelFor } from '../../src/runtime/activity-deps';
import { modelSummarizer } from '../../src/replay/replay-summarizer';
import { NoSummarizerModelError } from '../../src/replay/replay-session';
import { SUMMARIZER_SYSTEM_PROMPT } from '../../src/compaction/prompts';
import { conversationJsonl, generatedTranscript, plantedIdentifiers } from './generate-conversation';
import { summaryCharBudget } from '../../src/compaction/summary-budget';
import { identifierCharBudget } from '../../src/compaction/identifier-budget';

const base = configFromEnv({});
const policy = (json: Record<string, unknown>, name = 'p'): ReplayPolicy =>
  parseReplayPolicy({ name, ...json }, base, { source: `${name}.json`, defaultName: name });
const SMALL = { contextWindowTokens: 50_000, reserveTokens: 20_000 };
const dir = mkdtempSync(join(tmpdir(), 'keel-replay-'));

describe('replay policy files', () => {
  it('refuse an unknown key by name, list the known ones, and change nothing', () => {
    expect(() => policy({ reserveToken: 1 })).toThrow(ReplayPolicyError);
    expect(() => policy({ reserveToken: 1 })).toThrow(
      /reserveToken: not a replay policy setting .*known settings: .*reserveTokens/,
    );
  });

  it('check values with the config schemas, naming the key', () => {
    expect(() => policy({ keepRecentTokens: -5 })).toThrow(/keepRecentTokens: use tokens ≥ 0/);
    expect(() => policy({ contextEngine: 'nope' })).toThrow(/contextEngine: "nope" is not a registered context engine/);
    // Coherence of the merged settings: output that cannot fit the window, named by its key.
    const bigOutput = configFromEnv({ KEEL_MAX_OUTPUT_TOKENS: '9000' });
    const merge = () =>
      parseReplayPolicy({ contextWindowTokens: 8_000 }, bigOutput, { source: 'small.json', defaultName: 'small' });
    expect(merge).toThrow(/maxOutputTokens: 9000 output tokens do not fit the 8000-token context window; set fewer/);
    expect(merge).not.toThrow(/KEEL_CONTEXT_WINDOW/);
  });

  it('take a small window with the floor off, the reserve held to half of it', () => {
    const small = policy({ contextWindowTokens: 8_000, reserveTokens: 3_000, reserveTokensFloor: 0 });
    expect(small).toMatchObject({ contextWindow: 8_000, reserveTokens: 3_000, reserveTokensFloor: 0 });
    expect(reserveForWindow(small.contextWindow, small)).toBe(3_000);
    // A reserve larger than the window is held to half of it, not refused in the name of KEEL_CONTEXT_WINDOW.
    const tiny = policy({ contextWindowTokens: 4_000, reserveTokens: 20_000, reserveTokensFloor: 0 });
    expect(reserveForWindow(tiny.contextWindow, tiny)).toBe(2_000);
  });

  it('read from a file: name from the file, defaults from the agent configuration; bad JSON names the file', () => {
    const file = join(dir, 'tight.json');
    writeFileSync(
      file,
      JSON.stringify({
        contextWindowTokens: 80_000,
        contextEngine: 'budgeted',
        contextEngineOptions: { minPrunableToolChars: 500 },
      }),
    );
    const p = readReplayPolicy(file, configFromEnv({ KEEL_RESERVE_TOKENS: '25000' }));
    expect(p).toMatchObject({
      name: 'tight',
      contextWindow: 80_000,
      reserveTokens: 25_000,
      contextEngine: 'budgeted',
      contextEngineOptions: { minPrunableToolChars: 500 },
      keepRecentTokens: 20_000,
    });
    expect(p.overheadTokens).toBeGreaterThan(100);
    writeFileSync(join(dir, 'broken.json'), '{ "contextWindowTokens": ');
    expect(() => readReplayPolicy(join(dir, 'broken.json'), base)).toThrow(/broken\.json: not valid JSON/);
    expect(currentReplayPolicy(base)).toMatchObject({
      name: 'current',
      contextWindow: 200_000,
      contextEngine: 'legacy',
    });
  });
});

describe('replaying a generated session', () => {
  const transcript = generatedTranscript({ turns: 150, toolChars: 6_000 });

  it('compacts exactly where Keel’s thresholds say: after turns over window − reserve, mid-turn when a call would not fit', async () => {
    const p = policy(SMALL);
    const run = await replaySession(transcript, p);
    const reserve = effectiveReserveTokens(p.contextWindow, p.reserveTokens);
    expect(run.turns).toHaveLength(150);
    for (const t of run.turns) {
      // No storm hold here (every compaction frees far more than 10%): the after-turn rule alone decides.
      expect(t.compactedAfter).toBe(t.contextTokens > p.contextWindow - reserve);
      expect(t.contextTokens).toBeLessThanOrEqual(p.contextWindow);
    }
    expect(run.compactions.length).toBeGreaterThanOrEqual(3);
    for (const c of run.compactions) {
      expect(c.status).toBe('succeeded');
      expect(c.tokensAfter).toBeLessThan(c.tokensBefore / 2);
      expect(c.missingIdentifiers).toEqual([]);
    }
    // The turn after a compaction starts from the summary and the kept tail.
    for (const c of run.compactions)
      if (c.turn < 150) expect(run.turns[c.turn].contextTokens).toBeLessThan(c.tokensBefore);
    expect(run.totals.tokensSent).toBe(run.turns.reduce((n, t) => n + t.tokensSent, 0));
    // Planted identifiers of summarized turns are in the last summary, verbatim.
    const planted = [10, 20, 30, 40].flatMap(plantedIdentifiers);
    expect(run.identifiers.kept).toEqual(expect.arrayContaining(planted));
    expect(run.identifiers.lost).toEqual([]);
  });

  it('shows what the budgeted engine’s pruning and a lower reserve floor change', async () => {
    const legacy = policy(SMALL, 'legacy');
    const pruning = policy(
      {
        ...SMALL,
        contextEngine: 'budgeted',
        contextEngineOptions: { minPrunableToolChars: 1_000, keepLastAssistants: 2 },
      },
      'pruning',
    );
    const lowFloor = policy({ ...SMALL, reserveTokens: 8_000, reserveTokensFloor: 0 }, 'low floor');
    const report = await runReplay(transcript, [legacy, pruning, lowFloor], { advice: ['lower the reserve'] });
    const [a, b, c] = report.policies;
    expect(a.totals.prunedTurns).toBe(0);
    expect(b.totals.prunedTurns).toBeGreaterThan(0);
    // Clearing old tool output postpones the first compaction.
    expect(b.compactions[0].turn).toBeGreaterThan(a.compactions[0].turn);
    // A reserve of 8,000 without the 20,000 floor lets the context grow to 42,000 before compacting.
    expect(c.totals.peakContextTokens).toBeGreaterThan(a.totals.peakContextTokens + 5_000);
    expect(c.totals.compactions).toBeLessThan(a.totals.compactions);
    const rows = Object.fromEntries(report.differences.map((d) => [d.metric, d]));
    expect(rows['context engine']).toMatchObject({
      differs: true,
      values: ['legacy', 'budgeted (minPrunableToolChars 1000, keepLastAssistants 2)', 'legacy'],
    });
    expect(rows['context window']).toMatchObject({ differs: false });
    expect(report.advice).toEqual(['lower the reserve']);

    const text = renderReplayText(report);
    expect(text).toContain('policy pruning: window 50.0k');
    expect(text).toMatch(/peak {5}\[█+░+\] \d+\.\d% of 50\.0k/);
    expect(text).toContain('differences:');
    expect(text).toContain('advice:\n  lower the reserve');
  });

  it('shows each advice line with one bullet, in the terminal and in the HTML report', async () => {
    // Lines as `keel profile` prints them: headings, then items carrying their own markers.
    const advice = [
      'Pattern: mixed',
      '  - 3.0 tool calls per turn',
      'Already right:',
      '  ✓ reserve (reserveTokens 20000): room for replies',
      'Recommended for mixed work (most sessions):',
      '  • engine: contextEngine "legacy" → "budgeted": old tool output is cleared',
    ];
    const report = await runReplay(transcript, [policy(SMALL, 'legacy')], { advice });
    const text = renderReplayText(report);
    expect(text).toContain('advice:\n  Pattern: mixed\n    - 3.0 tool calls per turn\n  Already right:\n    ✓ reserve');
    expect(text).not.toMatch(/[-•] +[-•✓] /);
    const html = renderReplayHtml(report);
    expect(html).toContain('<ul id="advice"><li>Pattern: mixed<ul><li>3.0 tool calls per turn</li></ul></li>');
    expect(html).toContain('<li>reserve (reserveTokens 20000): room for replies</li>');
    expect(html).not.toMatch(/<li>\s*[-•✓] /);
  });

  it('reads the same conversation from an OpenClaw JSONL file and replays it to the same numbers', async () => {
    const file = join(dir, 'session.jsonl');
    writeFileSync(file, conversationJsonl(transcript.entries));
    const fromFile = await fileTranscript(file);
    expect(fromFile.entries.map((e) => e.id)).toEqual(transcript.entries.map((e) => e.id));
    const p = policy(SMALL);
    const [a, b] = await Promise.all([
      replaySession(transcript, p),
      replaySession({ ...fromFile, sessionKey: 'agent:main:main' }, p),
    ]);
    expect(b.turns.map((t) => t.contextTokens)).toEqual(a.turns.map((t) => t.contextTokens));
    writeFileSync(join(dir, 'not-a-transcript.jsonl'), '\n\n');
    await expect(fileTranscript(join(dir, 'not-a-transcript.jsonl'))).rejects.toThrow(/no session header/);
  });

  it('replays a 2,000-turn session under two policies in one run', async () => {
    const long = generatedTranscript({ turns: 2_000, toolChars: 1_500, answerWords: 40 });
    let progress = 0;
    const report = await runReplay(long, [policy(SMALL, 'a'), policy({ contextWindowTokens: 120_000 }, 'b')], {
      onProgress: (done, total) => (progress = done / total),
    });
    expect(progress).toBe(1);
    expect(report.turns).toBe(2_000);
    const [a, b] = report.policies;
    expect(a.totals.turns).toBe(2_000);
    expect(a.totals.compactions).toBeGreaterThan(b.totals.compactions);
    expect(b.totals.compactions).toBeGreaterThan(5);
    expect(a.totals.peakPressure).toBeLessThanOrEqual(1);
    // Summaries re-distil and stay within their budget (the window's share, beside the identifier listing's own) however many compactions stack.
    const cap = summaryCharBudget(SMALL.contextWindowTokens) + identifierCharBudget(SMALL.contextWindowTokens) + 300;
    expect(Math.max(...a.compactions.map((c) => c.summaryChars))).toBeLessThanOrEqual(cap);
  }, 120_000);
});

describe('model summaries', () => {
  let fake: FakeAnthropic;
  beforeAll(async () => {
    fake = await startFakeAnthropic();
  });
  afterAll(async () => {
    await fake.close();
  });

  it('come from the configured summarizer through the fallback chain and the guard; a failing model falls back to the extractive summary', async () => {
    const config = configFromEnv({}, { anthropicBaseUrl: fake.url, anthropicApiKey: 'test-key' });
    const p = parseReplayPolicy({ ...SMALL, summarizer: 'model' }, config, { source: 'm.json', defaultName: 'model' });
    const transcript = generatedTranscript({ turns: 60, toolChars: 6_000 });
    await expect(replaySession(transcript, p)).rejects.toThrow(NoSummarizerModelError);
    const model = summarizerModelFor(config)!;
    expect(model.model).toBe(config.model);

    fake.respondWith(goodSummarizer);
    const from = fake.requests.length;
    const good = await replaySession(transcript, p, { modelSummarizer: modelSummarizer(model.client, model.model) });
    const calls = fake.requests.slice(from);
    expect(good.compactions.length).toBeGreaterThanOrEqual(1);
    expect(calls.length).toBeGreaterThanOrEqual(good.compactions.length);
    expect(calls.every((r) => JSON.stringify(r.body.system).includes(SUMMARIZER_SYSTEM_PROMPT.slice(0, 40)))).toBe(
      true,
    );
    for (const c of good.compactions) expect(c).toMatchObject({ degraded: false, missingIdentifiers: [] });
    // The second compaction re-distils the first one's summary: the model saw it.
    if (good.compactions.length > 1) expect(JSON.stringify(calls.at(-1)!.body.messages)).toContain('Chunk summary');
    expect(good.identifiers.lost).toEqual([]);

    fake.respondWith(() => fakeReply.invalidRequest('summarizer down'));
    const failing = await replaySession(transcript, p, { modelSummarizer: modelSummarizer(model.client, model.model) });
    expect(failing.compactions.map((c) => c.degraded)).toEqual(good.compactions.map(() => true));
    expect(failing.totals.finalSummaryChars).toBeGreaterThan(0);
    fake.respondWith(undefined);
    // The fallback is exactly the extractive summary a policy without a model writes.
    const extractive = await replaySession(transcript, { ...p, summarizer: 'extractive' });
    expect(extractive.turns.map((t) => t.summaryChars)).toEqual(failing.turns.map((t) => t.summaryChars));
  });
});

describe('a compaction that would not reclaim tokens', () => {
  it('is skipped, as the worker skips it: nothing replaces the window, and the storm hold spaces the next tries', async () => {
    const config = configFromEnv({}, { anthropicBaseUrl: 'http://127.0.0.1:9', anthropicApiKey: 'test-key' });
    const p = parseReplayPolicy({ ...SMALL, summarizer: 'model' }, config, { source: 'm.json', defaultName: 'model' });
    const transcript = generatedTranscript({ turns: 60, toolChars: 6_000 });
    const good = await replaySession(transcript, p, {
      modelSummarizer: async () => 'Chunk summary. Goal: finish the migration.',
    });
    // A summarizer that writes more than the whole window it summarizes.
    const bloated = await replaySession(transcript, p, {
      modelSummarizer: async () => 'The conversation so far. '.repeat(20_000),
    });
    expect(good.compactions.every((c) => c.status === 'succeeded')).toBe(true);
    expect(bloated.compactions.length).toBeGreaterThan(0);
    for (const c of bloated.compactions)
      expect(c).toMatchObject({ status: 'skipped', tokensAfter: c.tokensBefore, summarizedMessages: 0 });
    expect(bloated.totals.finalSummaryChars).toBe(0);
    // Each skip counts as a compaction that reclaimed nothing: the next try waits for the context to grow.
    const overThreshold = bloated.turns.filter(
      (t) => t.contextTokens > p.contextWindow - effectiveReserveTokens(p.contextWindow, p.reserveTokens),
    ).length;
    expect(bloated.compactions.length).toBeLessThan(overThreshold);
  });
});

describe('the HTML report', () => {
  it('is one file with Chart.js inlined, no external resource, and everything user-derived escaped', async () => {
    const hostile = policy(SMALL, '<img src=x onerror=alert(1)>');
    const report = await runReplay(generatedTranscript({ turns: 40, toolChars: 6_000 }), [hostile], {
      advice: ['</script><script>alert(2)</script> & more'],
    });
    const html = renderReplayHtml(report);
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;/script&gt;&lt;script&gt;alert(2)&lt;/script&gt; &amp; more');
    // Three script elements (data, Chart.js, drawing) and nothing loaded from elsewhere.
    expect(html.match(/<script/g)).toHaveLength(3);
    expect(html.match(/<\/script>/g)).toHaveLength(3);
    expect(html).not.toMatch(/<script[^>]+src=|<link |@import/);
    expect(html).toContain(
      readFileSync(require.resolve('chart.js').replace(/chart\.cjs$/, 'chart.umd.min.js'), 'utf8').slice(0, 200),
    );
    // The inline data names the policy, escaped for a script element.
    expect(html).toContain('\\u003cimg src=x onerror=alert(1)>');
  });
});

describe('keel replay on the command line', () => {
  it('replays a .jsonl under two policy files (--json and --html), and refuses an unknown policy key by name', async () => {
    const file = join(dir, 'cli.jsonl');
    writeFileSync(file, conversationJsonl(generatedTranscript({ turns: 60, toolChars: 6_000 }).entries));
    writeFileSync(join(dir, 'small.json'), JSON.stringify(SMALL));
    writeFileSync(join(dir, 'large.json'), JSON.stringify({ contextWindowTokens: 200_000 }));
    writeFileSync(join(dir, 'typo.json'), JSON.stringify({ keepRecentTokenz: 5 }));
    const env = { KEEL_HOME: join(dir, 'home'), KEEL_CONFIG: undefined, DATABASE_URL: undefined };
    const html = join(dir, 'report.html');
    const [json, typo] = await Promise.all([
      keel(
        [
          'replay',
          file,
          '--policy',
          join(dir, 'small.json'),
          '--compare',
          join(dir, 'large.json'),
          '--html',
          html,
          '--json',
        ],
        env,
      ),
      keel(['replay', file, '--policy', join(dir, 'typo.json')], env),
    ]);
    expect(json.code).toBe(0);
    expect(json.stderr).toBe(`wrote the replay report to ${html}\n`);
    const report = JSON.parse(json.stdout);
    expect(report.policies.map((p: { policy: ReplayPolicy }) => [p.policy.name, p.policy.contextWindow])).toEqual([
      ['small', 50_000],
      ['large', 200_000],
    ]);
    expect(report.policies[0].totals.compactions).toBeGreaterThan(0);
    expect(report.policies[1].totals.compactions).toBe(0);
    expect(readFileSync(html, 'utf8')).toContain('<canvas id="context-chart"');
    // The advice is the conversation's profile: its work style, then settings that differ (the default engine keeps tool output).
    expect(report.advice[0]).toMatch(/^Pattern: (tool-heavy|mixed)/);
    expect(report.advice).toContainEqual(expect.stringContaining('legacy → budgeted'));
    expect(readFileSync(html, 'utf8')).toContain('<ul id="advice"><li>Pattern: ');
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain('keepRecentTokenz: not a replay policy setting');
  }, 60_000);
});
