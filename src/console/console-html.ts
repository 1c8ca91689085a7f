/**
 * The console's two documents: the login form, and the application shell its script fills in.
 * Everything is served by the API process itself; nothing comes from another origin.
 */
import { CONSOLE_CSS } from './console-css';

const head = (title: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title><link rel="stylesheet" href="/console/console.css"></head>`;

/** The login form: the API token, posted to `/console/login`, which answers with the cookie. */
export function loginPage(error?: string): string {
  return `${head('Keel console: log in')}<body><main class="login"><h1>Keel console</h1>
<form method="post" action="/console/login">
<label for="token">API token (KEEL_API_TOKEN)</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Log in</button>
${error ? `<p class="error" role="alert">${error}</p>` : ''}
</form></main><style>${CONSOLE_CSS}</style></body></html>`;
}

/** The application shell: a header, the view the script draws, and the scripts (Chart.js, then the console's). */
export function consolePage(): string {
  return `${head('Keel console')}<body>
<header><a href="#/" class="brand">Keel console</a><nav><a href="#/">Fleet</a><form method="post" action="/console/logout"><button type="submit">Log out</button></form></nav></header>
<main id="view" aria-live="polite"><p>Loading…</p></main>
<script src="/console/chart.js"></script>
<script src="/console/console.js"></script>
</body></html>`;
}
