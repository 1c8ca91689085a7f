/**
 * The HTML replay report in a real browser: Debian's chromium (CHROMIUM_PATH, else `chromium` on
 * PATH) driven by playwright-core opens the file with no network, and the charts must have drawn:
 * pixels on both canvases, a legend naming each policy. A screenshot lands in test-output/.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { configFromEnv } from '../../src/config/keel-config';
import { parseReplayPolicy } from '../../src/replay/replay-policy';
import { runReplay } from '../../src/replay/replay-report';
import { renderReplayHtml } from '../../src/replay/replay-html';
import { generatedTranscript } from './generate-conversation';
import { chromiumPath } from '../support/tool-path';

const OUTPUT = resolve(__dirname, '../../test-output');

/** What the page's scripts see (the test compiles without the DOM library). */
interface PageGlobals {
  replayChartsDrawn?: boolean;
  document: { getElementById(id: string): Canvas };
  Chart: {
    getChart(canvas: Canvas): {
      data: { datasets: Array<{ label: string; data: unknown[] }> };
      legend: { legendItems: Array<{ text: string }> };
    };
  };
}
interface Canvas {
  width: number;
  height: number;
  getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: ArrayLike<number> } };
}

/**
 * CHROMIUM_PATH (.ci/run sets it, so in CI a missing browser fails the suite), else `chromium` on
 * PATH, else none: the suite is skipped, and test/support/report-skips.ts says so at the start.
 */
const executablePath = chromiumPath() ?? '';

(executablePath ? describe : describe.skip)('the replay report in headless Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('draws both charts with compaction markers and a legend per policy, shows the differences and the advice, and loads nothing from the network', async () => {
    const base = configFromEnv({});
    const policies = [
      parseReplayPolicy({ name: 'tight window', contextWindowTokens: 50_000, reserveTokens: 20_000 }, base, {
        source: 'a',
        defaultName: 'a',
      }),
      parseReplayPolicy(
        {
          name: 'pruning <b>',
          contextWindowTokens: 50_000,
          contextEngine: 'budgeted',
          contextEngineOptions: { minPrunableToolChars: 1_000 },
        },
        base,
        { source: 'b', defaultName: 'b' },
      ),
    ];
    const report = await runReplay(generatedTranscript({ turns: 120, toolChars: 6_000 }), policies, {
      advice: ['keep tool output short <script>'],
    });
    mkdirSync(OUTPUT, { recursive: true });
    const file = join(OUTPUT, 'replay-report.html');
    writeFileSync(file, renderReplayHtml(report));

    const page = await browser.newPage({ viewport: { width: 1100, height: 1400 } });
    const requests: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith('file:')) requests.push(r.url());
    });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(pathToFileURL(file).href);
    await page.waitForFunction(() => (globalThis as unknown as PageGlobals).replayChartsDrawn === true, undefined, {
      timeout: 10_000,
    });
    expect(errors).toEqual([]);
    expect(requests).toEqual([]);

    const charts = await page.evaluate(() => {
      const page = globalThis as unknown as PageGlobals;
      return ['context-chart', 'summary-chart'].map((id) => {
        const canvas = page.document.getElementById(id);
        const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
        let painted = 0;
        for (let i = 3; i < pixels.length; i += 4) if (pixels[i] !== 0) painted++;
        const chart = page.Chart.getChart(canvas);
        return {
          painted,
          total: canvas.width * canvas.height,
          legend: chart.legend.legendItems.map((l) => l.text),
          points: Object.fromEntries(chart.data.datasets.map((d) => [d.label, d.data.length])),
        };
      });
    });
    const [context, summary] = charts;
    // Axes, grid, lines and legend cover a real share of the canvas, not a blank one.
    for (const c of charts) expect(c.painted).toBeGreaterThan(c.total * 0.02);
    expect(context.legend).toEqual(
      expect.arrayContaining([
        'tight window — context tokens',
        'tight window — compaction',
        'pruning <b> — context tokens',
        'pruning <b> — pruned',
      ]),
    );
    expect(summary.legend).toEqual(['tight window — summary chars', 'pruning <b> — summary chars']);
    expect(context.points['tight window — context tokens']).toBe(120);
    expect(context.points['tight window — compaction']).toBe(
      report.policies[0].turns.filter((t) => t.compactedAfter || t.compactedMidTurn).length,
    );
    expect(context.points['tight window — compaction']).toBeGreaterThan(0);

    // The tables and the advice arrive as text, markup from the inputs shown, not run.
    expect(await page.locator('#policies').innerText()).toContain('pruning <b>');
    expect(await page.locator('#differences tr.differs').count()).toBeGreaterThan(2);
    expect(await page.locator('#advice').innerText()).toBe('keep tool output short <script>');
    await page.screenshot({ path: join(OUTPUT, 'replay-report.png'), fullPage: true });
    await page.close();
  }, 60_000);
});
