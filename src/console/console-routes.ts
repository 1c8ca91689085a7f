/**
 * The operators' console, served at `/` by the API process: a login form that trades the API token
 * for a cookie, the application shell, its script and stylesheet, and Chart.js from node_modules (no
 * network at run time). The data comes from the API's own routes, which accept the cookie.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { timingSafeEqual, createHash } from 'node:crypto';
import type { Hono } from 'hono';
import { deleteCookie } from 'hono/cookie';
import { CONSOLE_COOKIE, consoleCookieOf, consoleCookieValue, setConsoleCookie } from './console-cookie';
import { consolePage, loginPage } from './console-html';
import { CONSOLE_CSS } from './console-css';
import { CONSOLE_SCRIPT } from './console-script.generated';

let chartJsSource: string | undefined;
/** Chart.js's browser build, read once per process (as the replay report inlines it). */
function chartJs(): string {
  chartJsSource ??= readFileSync(join(dirname(require.resolve('chart.js')), 'chart.umd.min.js'), 'utf8');
  return chartJsSource;
}

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/**
 * The routes open to anyone, registered before the API's auth: `GET /` answers the login form (401)
 * to a browser without the cookie, and `POST /console/login` checks the token and sets the cookie.
 */
export function registerConsoleLogin(app: Hono, token: string): void {
  const expectedCookie = sha(consoleCookieValue(token));
  const expectedToken = sha(token);
  app.get('/', async (c, next) => {
    const cookie = consoleCookieOf(c);
    if (cookie !== undefined && timingSafeEqual(sha(cookie), expectedCookie)) return next();
    return c.html(loginPage(), 401);
  });
  app.post('/console/login', async (c) => {
    const form = await c.req.parseBody();
    const sent = typeof form.token === 'string' ? form.token : '';
    if (!timingSafeEqual(sha(sent), expectedToken))
      return c.html(loginPage('That is not the server’s KEEL_API_TOKEN.'), 401);
    setConsoleCookie(c, token);
    return c.redirect('/', 303);
  });
  app.post('/console/logout', (c) => {
    deleteCookie(c, CONSOLE_COOKIE, { path: '/' });
    return c.redirect('/', 303);
  });
}

/** The console's pages and assets, behind the API's auth (the cookie or the bearer token). */
export function registerConsoleRoutes(app: Hono): void {
  app.get('/', (c) => c.html(consolePage()));
  const asset =
    (type: string, body: () => string) => (c: { body: (b: string, s: 200, h: Record<string, string>) => Response }) =>
      c.body(body(), 200, {
        'content-type': type,
        'cache-control': 'no-cache',
      });
  app.get(
    '/console/console.js',
    asset('text/javascript; charset=utf-8', () => CONSOLE_SCRIPT),
  );
  app.get(
    '/console/console.css',
    asset('text/css; charset=utf-8', () => CONSOLE_CSS),
  );
  app.get('/console/chart.js', asset('text/javascript; charset=utf-8', chartJs));
}
