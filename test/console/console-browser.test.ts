/**
 * The operators' console in a real browser: Debian's chromium driven by playwright-core against
 * `serveApi` with a real dev server, worker and the fake model, its store seeded with 10,000 extra
 * sessions. Log in, page and filter the fleet (a row's context split and prompt-cache hit rate), open
 * a session with a degraded compaction, read its summary, retry it through to a clean one, read what
 * that kept, rerun and revert it, and watch a new turn's reply appear without reloading. At phone
 * width: kill a running subagent, and see the session's unasked answer arrive over its events stream.
 * Screenshots land in test-output/.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/store/schema';
import { chromium, type Browser, type Page } from 'playwright-core';
import { testDatabases } from '../support/databases';
import { fakeReply } from '../../src/testing/fake-anthropic';
import { integrationSuite, type WorkerContext } from '../support/integration';
import {
  freshDurableAgent,
  isFlushRequest,
  isSummarizerRequest,
  realisticMessage,
} from '../support/durable-turn-helpers';
import { goodSummarizer } from '../compaction-workflow/support';
import { startApi, TEST_API_TOKEN, type ApiUnderTest } from '../support/http-api';
import { chromiumPath } from '../support/tool-path';
import { waitUntil } from '../support/wait-until';
import { PARENT_PROMPT, lookupTools, subagentResponder } from '../subagents/subagent-script';

const OUTPUT = resolve(__dirname, '../../test-output');
const MESSAGES = '/v1/sessions/{sessionKey}/messages';
const SEEDED = 10_000;
/** A question longer than the tail a compaction keeps (`keepRecentTokens`), so a retry has something to summarize. */
const LONG_NOTES = Array.from({ length: 12_000 }, (_, i) => `note${i}`).join(' ');
const executablePath = chromiumPath() ?? '';
const suite = integrationSuite();

/** The console routes, each of which must refuse a request without the cookie or the token. */
const CONSOLE_ROUTES = [
  '/',
  '/console/console.js',
  '/console/console.css',
  '/console/chart.js',
  '/v1/console/sessions',
  '/v1/sessions/agent%3Amain%3Amain/transcript',
  '/v1/sessions/agent%3Amain%3Amain/compactions',
];

(executablePath ? describe : describe.skip)('the console in headless Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: executablePath!,
      args: ['--no-sandbox'],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  describe.each(testDatabases())('on $name', (database) => {
    const db = suite.storePerTest(database);

    it('logs in, pages the fleet, opens a session, retries, reruns and reverts its compactions and shows a new reply live', () =>
      suite.withWorker(db.store, {}, async (t) => {
        const api = await startApi(suite.env, t);
        const page = await browser.newPage({
          viewport: { width: 1280, height: 1000 },
        });
        try {
          const agent = freshDurableAgent();
          const key = `agent:${agent}:main`;
          const compactionId = await sessionWithDegradedCompaction(api, t, key);
          await seedSessions(t.store.db, SEEDED);

          const fleetRequests: string[] = [];
          const offsite: string[] = [];
          page.on('request', (r) => {
            const url = new URL(r.url());
            if (!r.url().startsWith(api.url)) offsite.push(r.url());
            if (url.pathname === '/v1/console/sessions') fleetRequests.push(url.search);
          });
          const errors: string[] = [];
          page.on('pageerror', (e) => errors.push(e.message));

          // Without the cookie: the login form, and nothing else.
          const first = await page.goto(`${api.url}/`);
          expect(first!.status()).toBe(401);
          await page.fill('#token', 'not-the-token');
          await page.click('button[type=submit]');
          await page.waitForSelector('.login .error');
          await page.fill('#token', TEST_API_TOKEN);
          await page.click('button[type=submit]');

          // The fleet: one page of 50 from the server, the total counted there.
          await page.waitForSelector('#sessions tbody tr');
          expect(await page.locator('#sessions tbody tr').count()).toBe(50);
          expect(await page.textContent('#page-label')).toBe(
            `page 1 of ${Math.ceil((SEEDED + 1) / 50)} · ${SEEDED + 1} sessions`,
          );
          expect(fleetRequests).toEqual(['?page=1&pageSize=50&sort=updated']);
          const cookie = (await page.context().cookies()).find((c) => c.name === 'keel_console');
          expect(cookie).toMatchObject({
            httpOnly: true,
            sameSite: 'Strict',
          });
          expect(cookie!.value).not.toContain(TEST_API_TOKEN);
          // The charts: every session in the histogram (counted by the database), a bar per hour.
          await page.waitForSelector('#compactions-chart');
          expect(await drawn(page, 'pressure-chart')).toMatchObject({ painted: true, points: [SEEDED + 1] });
          expect(await drawn(page, 'compactions-chart')).toMatchObject({ painted: true, points: [24, 24] });
          mkdirSync(OUTPUT, { recursive: true });
          await page.screenshot({
            path: join(OUTPUT, `console-fleet-${database.name}.png`),
          });

          // Find the session by filter, by keyboard.
          await page.focus('#filter');
          await page.keyboard.type(agent);
          await page.keyboard.press('Enter');
          await page.locator('#page-label', { hasText: 'page 1 of 1 · 1 sessions' }).waitFor();
          expect(await page.locator('#sessions tbody a').allTextContents()).toEqual([key]);
          expect(fleetRequests.at(-1)).toBe(`?page=1&pageSize=50&sort=updated&q=${agent}`);
          // Its row: the context in the chat's four parts, and the prompt-cache hit rate status reports.
          const status = await api.call('GET', '/v1/sessions/{sessionKey}', { params: { sessionKey: key } });
          const split = status.body.contextSplit;
          expect(
            await page
              .locator('#sessions tbody td.context .bar span')
              .evaluateAll((spans) => spans.map((s) => s.className)),
          ).toEqual(['p-system', 'p-workspace', 'p-tools', 'p-history']);
          expect(await page.locator('#sessions tbody td.context .bar').getAttribute('aria-label')).toMatch(
            new RegExp(
              `^system ${split.systemTokens}, workspace ${split.bootstrapTokens}, tools ${split.toolTokens}, history \\d+ of \\d+$`,
            ),
          );
          expect(await page.locator('#sessions tbody td.cache').textContent()).toBe(
            `${status.body.promptCache.hitRatePercent}%`,
          );
          await page.click(`#sessions a`);

          // The session: its degraded compaction with the summary it wrote, and the transcript.
          const degraded = page.locator(`[data-compaction="${compactionId}"]`);
          await degraded.waitFor();
          expect(await degraded.getAttribute('data-status')).toBe('succeeded degraded');
          await degraded.locator('summary', { hasText: 'Summary' }).click();
          expect(await degraded.locator('pre.summary').textContent()).toMatch(/\S/);
          await page.waitForSelector('#transcript .entry');
          // The context chart: a point per model reply, the compaction marked.
          await page.waitForSelector('#context-chart');
          // The context chart: a point per model reply, the compaction marked, nothing pruned.
          expect(await drawn(page, 'context-chart')).toMatchObject({ painted: true, points: [2, 1, 0] });
          expect(await page.locator('#transcript').textContent()).toContain('deploy PAY-1234 first');

          // A turn sent elsewhere shows up in the open page without a reload. Its long question
          // gives the retry below more than the kept tail to summarize.
          t.fake.enqueue(fakeReply.text('Shipped to production at noon.'), fakeReply.text('You are welcome.'));
          const sent = await api.call('POST', MESSAGES, {
            params: { sessionKey: key },
            body: { text: `when did it ship? ${LONG_NOTES}` },
          });
          expect(sent.status).toBe(200);
          await page
            .locator('#transcript .entry', { hasText: 'Shipped to production at noon.' })
            .waitFor({ timeout: 45_000 });
          await page.screenshot({ path: join(OUTPUT, `console-live-${database.name}.png`) });
          await api.call('POST', MESSAGES, { params: { sessionKey: key }, body: { text: 'thanks' } });

          // Retry, confirmed, through to a compaction that is not degraded.
          t.fake.respondWith(goodSummarizer);
          page.once('dialog', (d) => void d.accept());
          await degraded.locator('[data-retry]').click();
          await page
            .locator('[data-compaction][data-status="succeeded"]', { hasText: `retry of ${compactionId}` })
            .waitFor({ timeout: 60_000 });
          await page.screenshot({ path: join(OUTPUT, `console-session-${database.name}.png`), fullPage: true });
          const records = await t.store.db
            .selectFrom('compactions')
            .select(['id', 'retry_of', 'status', 'degraded'])
            .where('retry_of', '=', compactionId)
            .execute();
          expect(records).toEqual([expect.objectContaining({ status: 'succeeded', degraded: false })]);
          const retriedId = records[0]!.id;
          // What its summary kept: the identifiers of the conversation it summarized.
          const retried = page.locator(`[data-compaction="${retriedId}"]`);
          await retried.locator('details.kept > summary').click();
          expect(await retried.locator('.kept-identifiers li').allTextContents()).toEqual(
            expect.arrayContaining(['/srv/api/main.ts', 'PAY-1234']),
          );

          // Rerun it, confirmed: a new compaction record beside it, the session unchanged.
          const compactionsBefore = (await t.client.getStatus(key)).compactionCount;
          page.once('dialog', (d) => void d.accept());
          await page.locator(`[data-rerun="${retriedId}"]`).click();
          const rerun = await waitUntil('the rerun record, finished', async () => {
            const row = await t.store.db
              .selectFrom('compactions')
              .select(['id', 'status'])
              .where('rerun_of', '=', retriedId)
              .executeTakeFirst();
            return row && row.status !== 'running' && row;
          });
          expect(rerun.status).toBe('succeeded');
          await page.locator(`[data-compaction="${rerun.id}"][data-status="succeeded"]`).waitFor({ timeout: 60_000 });
          expect((await t.client.getStatus(key)).compactionCount).toBe(compactionsBefore);

          // Revert the retried compaction, confirmed: the revert is a compaction record of its own.
          page.once('dialog', (d) => void d.accept());
          await page.locator(`[data-revert="${retriedId}"]`).click();
          await page
            .locator('[data-compaction][data-status="succeeded"]', { hasText: '· revert ·' })
            .waitFor({ timeout: 60_000 });
          expect(
            await t.store.db
              .selectFrom('compactions')
              .select(['trigger', 'status'])
              .where('revert_of', '=', retriedId)
              .execute(),
          ).toEqual([{ trigger: 'revert', status: 'succeeded' }]);
          // The summarizer saw the long question: the retry summarized it.
          expect(
            t.fake.requests.some((r) => isSummarizerRequest(r) && JSON.stringify(r.body).includes('note11999')),
          ).toBe(true);

          // The what-if replay of this session, inline: its report's charts drawn, a legend per policy.
          await page.fill('#replay-policy', '{ "name": "tight", "contextWindowTokens": 50000 }');
          await page.click('#replay-run');
          const report = page.frameLocator('#replay-frame');
          await report.locator('#context-chart').waitFor({ timeout: 30_000 });
          expect(await report.locator('body').textContent()).toContain('tight');

          expect(errors).toEqual([]);
          expect(offsite).toEqual([]);
        } finally {
          await page.close();
          await api.close();
        }
      }));
  });
});

describe.each(testDatabases())('the console’s subagent tree on $name', (database) => {
  const db = suite.storePerTest(database);
  (executablePath ? it : it.skip)(
    'shows the runs a session spawned with their states, kills a running one, and the session’s unasked answer arrives over its events stream',
    () =>
      suite.withWorker(db.store, { tools: lookupTools() }, async (t) => {
        const api = await startApi(suite.env, t);
        const browser = await chromium.launch({ executablePath: executablePath!, args: ['--no-sandbox'] });
        try {
          const key = `agent:main:console-${database.name}-${freshDurableAgent()}`;
          // Oslo reports at once; Lima's last reply takes long enough to be killed from the page.
          t.fake.respondWith(
            subagentResponder({
              cities: ['Oslo', 'Lima'],
              childReplyDelayMs: (city) => (city === 'Lima' ? 25_000 : 0),
            }),
          );
          const page = await browser.newPage({ viewport: { width: 390, height: 900 } });
          await page.addInitScript(RECORD_EVENTS);
          await page.goto(`${api.url}/`);
          await page.fill('#token', TEST_API_TOKEN);
          await page.click('button[type=submit]');
          await page.waitForSelector('#sessions');
          await api.call('POST', MESSAGES, { params: { sessionKey: key }, body: { text: PARENT_PROMPT } });
          await page.goto(`${api.url}/#/s/${encodeURIComponent(key)}`);
          const oslo = page.locator('[data-subagent][data-state="done"]', { hasText: 'Oslo' });
          await oslo.waitFor({ timeout: 45_000 });
          const lima = page.locator('[data-subagent][data-state="running"]', { hasText: 'Lima' });
          await lima.waitFor({ timeout: 45_000 });
          await page.waitForFunction('window.__keelSeen.includes("open")');
          mkdirSync(OUTPUT, { recursive: true });
          await page.screenshot({ path: join(OUTPUT, `console-subagents-phone-${database.name}.png`), fullPage: true });

          // Kill Lima from the page, confirmed: its state turns killed, in the page and the store.
          page.once('dialog', (d) => void d.accept());
          await lima.locator('button', { hasText: 'Kill' }).click();
          const killed = page.locator('[data-subagent][data-state="killed"]', { hasText: 'Lima' });
          await killed.waitFor({ timeout: 60_000 });
          expect(await killed.locator('button', { hasText: 'Kill' }).count()).toBe(0);
          const stored = await t.store.db
            .selectFrom('subagent_runs')
            .select(['id', 'label', 'status'])
            .where('parent_session_key', '=', key)
            .orderBy('label')
            .execute();
          expect(stored).toEqual([
            { id: await killed.getAttribute('data-subagent'), label: 'Lima', status: 'killed' },
            { id: await oslo.getAttribute('data-subagent'), label: 'Oslo', status: 'done' },
          ]);

          // The session answers the kill unasked: the events stream brings it, and the page reads the
          // transcript again after it, without a reload.
          await page.locator('#transcript .entry', { hasText: 'Noted Lima.' }).waitFor({ timeout: 45_000 });
          const seen: string[] = await page.evaluate('window.__keelSeen');
          const announced = seen.findIndex((s) => s.startsWith('announce') && s.includes('Noted Lima.'));
          expect(announced).toBeGreaterThan(0);
          expect(seen.slice(announced + 1)).toContain('fetch transcript');
          await page.screenshot({
            path: join(OUTPUT, `console-subagent-killed-phone-${database.name}.png`),
            fullPage: true,
          });

          const steer = await api.call('POST', '/v1/subagents/{id}/steer', {
            params: { id: stored[1]!.id },
            query: { agent: 'main' },
            body: { text: 'one more city' },
          });
          expect(steer.body).toMatchObject({ id: stored[1]!.id, sent: false });
        } finally {
          await browser.close();
          await api.close();
        }
      }),
  );
});

/**
 * Run in the page before its scripts: records the events stream opening, each `announce` event
 * (with its data) and each transcript read, in order, in `window.__keelSeen`.
 */
const RECORD_EVENTS = `(() => {
  window.__keelSeen = [];
  const Source = window.EventSource;
  window.EventSource = class extends Source {
    constructor(url, options) {
      super(url, options);
      this.addEventListener('open', () => window.__keelSeen.push('open'));
      this.addEventListener('announce', (e) => window.__keelSeen.push('announce ' + e.data));
    }
  };
  const fetchOf = window.fetch;
  window.fetch = function (input, init) {
    if (String(input).includes('/transcript?')) window.__keelSeen.push('fetch transcript');
    return fetchOf.call(this, input, init);
  };
})()`;

describe('the console without the cookie', () => {
  const db = suite.storePerTest(testDatabases()[0]!);

  it('refuses every console route (401), and serves them with the token', () =>
    suite.withWorker(db.store, {}, async (t) => {
      const api = await startApi(suite.env, t);
      try {
        for (const route of CONSOLE_ROUTES) {
          const refused = await fetch(`${api.url}${route}`);
          expect([route, refused.status]).toEqual([route, 401]);
          const forged = await fetch(`${api.url}${route}`, {
            headers: { cookie: `keel_console=${TEST_API_TOKEN}` },
          });
          expect([route, forged.status]).toEqual([route, 401]);
        }
        // The login page is all `/` shows without the cookie; the data routes answer the bearer token.
        expect(await (await fetch(`${api.url}/`)).text()).toContain('name="token"');
        for (const route of CONSOLE_ROUTES.slice(1, 5)) {
          const served = await fetch(`${api.url}${route}`, {
            headers: { authorization: `Bearer ${TEST_API_TOKEN}` },
          });
          expect([route, served.status]).toEqual([route, 200]);
        }
        const wrong = await fetch(`${api.url}/console/login`, {
          method: 'POST',
          body: new URLSearchParams({ token: 'nope' }),
          redirect: 'manual',
        });
        expect(wrong.status).toBe(401);
        expect(wrong.headers.get('set-cookie')).toBeNull();
      } finally {
        await api.close();
      }
    }));
});

/**
 * Whether the Chart.js chart on canvas `id` painted pixels, and its datasets' sizes (the histogram's:
 * the sum of its bars). Evaluated as text: the test compiles without the DOM library.
 */
function drawn(page: Page, id: string): Promise<{ painted: boolean; points: number[] }> {
  return page.evaluate(`(() => {
    const canvas = document.getElementById(${JSON.stringify(id)});
    const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    let painted = 0;
    for (let i = 3; i < pixels.length; i += 4) if (pixels[i] !== 0) painted++;
    const sets = Chart.getChart(canvas).data.datasets;
    const points = ${JSON.stringify(id)} === 'pressure-chart' ? [sets[0].data.reduce((a, b) => a + b, 0)] : sets.map((d) => d.data.length);
    return { painted: painted > 0, points };
  })()`);
}

/** Two turns, then a compaction whose summarizer fails every attempt: succeeded, degraded. */
async function sessionWithDegradedCompaction(api: ApiUnderTest, t: WorkerContext, key: string): Promise<string> {
  // Replies of a real size: a summary of them is smaller, so the compaction reclaims tokens.
  t.fake.enqueue(
    fakeReply.text(realisticMessage('Noted: the API lives at /srv/api/main.ts.')),
    fakeReply.text(realisticMessage('Noted: deploy on PAY-1234 first.')),
  );
  await api.call('POST', MESSAGES, {
    params: { sessionKey: key },
    body: { text: 'the API is /srv/api/main.ts' },
  });
  await api.call('POST', MESSAGES, {
    params: { sessionKey: key },
    body: { text: 'deploy PAY-1234 first' },
  });
  t.fake.respondWith((r) =>
    isSummarizerRequest(r) ? fakeReply.serverError() : isFlushRequest(r) ? fakeReply.text('NO_REPLY') : undefined,
  );
  const compacted = await api.call('POST', '/v1/sessions/{sessionKey}/compact', {
    params: { sessionKey: key },
    body: { keepRecentTokens: 0 },
  });
  expect(compacted.body).toMatchObject({ status: 'succeeded', degraded: true });
  return compacted.body.compactionId as string;
}

/** `n` sessions of one agent written straight into the table, older than any real one. */
async function seedSessions(db: Kysely<Database>, n: number): Promise<void> {
  await sql`insert into sessions (agent_id, session_key, session_id, session_started_at, last_interaction_at, updated_at, toggles, context_tokens, compaction_count)
    select 'fleet', 'agent:fleet:seed-' || lpad(i::text, 5, '0'), 'seed-' || i, now() - interval '1 day', now() - interval '1 day', now() - interval '1 day' - (i || ' seconds')::interval, '{}', (i * 37) % 200000, i % 7
    from generate_series(1, ${n}) as i`.execute(db);
}
