/**
 * Tool approvals in the console, in a real browser: an in-process worker whose agent asks for approval
 * by pattern (`delete_*`), the dev server, the fake model, `serveApi`. The fleet lists a waiting call
 * with its arguments; Approve (confirmed) runs it once and the reply comes; in a session's view, Deny
 * asks for the reason, and the model reads it. What reached the model and how often the tool ran are
 * checked, not only the page.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { chromium, type Browser, type Page } from 'playwright-core';
import { testDatabases } from '../support/databases';
import { fakeReply, type FakeRequest } from '../../src/testing/fake-anthropic';
import { integrationSuite } from '../support/integration';
import { freshDurableAgent } from '../support/durable-turn-helpers';
import { startApi, TEST_API_TOKEN } from '../support/http-api';
import { chromiumPath } from '../support/tool-path';
import { ToolRegistry } from '../../src/tools/registry';

const OUTPUT = resolve(__dirname, '../../test-output');
const executablePath = chromiumPath() ?? '';
const suite = integrationSuite();

/** The tool_result blocks of the last message the model received. */
function lastToolResults(request: FakeRequest): Array<{ tool_use_id: string; is_error?: boolean; content: unknown }> {
  const last = request.body.messages!.at(-1)!;
  return (Array.isArray(last.content) ? last.content : []).filter((b: { type: string }) => b.type === 'tool_result');
}

async function logIn(page: Page, url: string): Promise<void> {
  await page.goto(`${url}/`);
  await page.fill('#token', TEST_API_TOKEN);
  await page.click('button[type=submit]');
}

(executablePath ? describe : describe.skip)('tool approvals in the console, in headless Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  describe.each(testDatabases())('on $name', (database) => {
    const db = suite.storePerTest(database);

    it('lists a waiting call in the fleet, approves it once, and denies another from its session with a reason', async () => {
      const runs: string[] = [];
      const tools = new ToolRegistry().register({
        name: 'delete_rows',
        description: 'Deletes rows',
        input: z.object({ table: z.string() }),
        run: async (input) => {
          runs.push(input.table);
          return `deleted ${input.table}`;
        },
      });
      await suite.withWorker(db.store, { tools, config: { approvalTools: ['delete_*'] } }, async (t) => {
        const api = await startApi(suite.env, t);
        const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
        const errors: string[] = [];
        page.on('pageerror', (e) => errors.push(e.message));
        try {
          const agent = freshDurableAgent();
          const key = `agent:${agent}:main`;

          // Approve from the fleet view.
          const first = t.fake.requests.length;
          t.fake.enqueue(
            fakeReply.toolUse([{ id: 'toolu_logs', name: 'delete_rows', input: { table: 'old_logs' } }]),
            fakeReply.text('old logs are gone'),
          );
          const approved = t.client.sendMessage(key, 'delete the old logs');
          await logIn(page, api.url);
          const card = page.locator('#approvals article.approval');
          await card.waitFor();
          expect(await card.locator('h3').textContent()).toContain('delete_rows');
          expect(await card.locator('a').textContent()).toBe(key);
          expect(JSON.parse((await card.locator('pre.arguments').textContent())!)).toEqual({ table: 'old_logs' });
          mkdirSync(OUTPUT, { recursive: true });
          await page.screenshot({ path: join(OUTPUT, `console-approvals-${database.name}.png`) });
          const questions: string[] = [];
          page.once('dialog', (d) => {
            questions.push(d.message());
            void d.accept();
          });
          await card.locator('button[data-approve]').click();
          await page.waitForSelector('[data-decided]');
          expect(questions).toEqual([`Run delete_rows for ${key}?`]);
          expect(await page.textContent('[data-decided]')).toBe('delete_rows approved by console');
          expect((await approved).reply).toBe('old logs are gone');
          expect(runs).toEqual(['old_logs']);
          expect(lastToolResults(t.fake.requests[first + 1]!)).toEqual([
            expect.objectContaining({
              tool_use_id: 'toolu_logs',
              content: [{ type: 'text', text: 'deleted old_logs' }],
            }),
          ]);
          await page.waitForSelector('#approvals article.approval', { state: 'detached' });

          // Deny from the session's view, with a reason the model reads.
          const second = t.fake.requests.length;
          t.fake.enqueue(
            fakeReply.toolUse([{ id: 'toolu_users', name: 'delete_rows', input: { table: 'users' } }]),
            fakeReply.text('kept the users'),
          );
          const denied = t.client.sendMessage(key, 'delete the users table');
          await page.goto(`${api.url}/#/s/${encodeURIComponent(key)}`);
          const waiting = page.locator('#approvals article.approval');
          await waiting.waitFor();
          expect(await waiting.locator('a').count()).toBe(0);
          page.once('dialog', (d) => void d.accept('users are needed'));
          await waiting.locator('button[data-deny]').click();
          await page.waitForSelector('[data-decided]');
          expect((await denied).reply).toBe('kept the users');
          expect(runs).toEqual(['old_logs']);
          expect(lastToolResults(t.fake.requests[second + 1]!)).toEqual([
            expect.objectContaining({
              tool_use_id: 'toolu_users',
              is_error: true,
              content: [
                {
                  type: 'text',
                  text: 'tool "delete_rows" was not run: the call was denied by console: users are needed',
                },
              ],
            }),
          ]);
          expect(errors).toEqual([]);
        } finally {
          await page.close();
          await api.close();
        }
      });
    }, 180_000);
  });
});
