import { createHmac } from 'node:crypto';
import type { Context } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';

/** The console's cookie: set by the login form, accepted by the API in place of the bearer header. */
export const CONSOLE_COOKIE = 'keel_console';

/** The cookie's value for `token`: derived, so the token itself never sits in the browser. */
export function consoleCookieValue(token: string): string {
  return createHmac('sha256', token).update('keel console cookie').digest('hex');
}

/** The console cookie the request carries, if any. */
export function consoleCookieOf(c: Context): string | undefined {
  return getCookie(c, CONSOLE_COOKIE);
}

/**
 * Sets the cookie: HttpOnly (page scripts cannot read it), SameSite=Strict (other sites' pages cannot
 * send it), Secure behind HTTPS.
 */
export function setConsoleCookie(c: Context, token: string): void {
  const secure = new URL(c.req.url).protocol === 'https:' || c.req.header('x-forwarded-proto') === 'https';
  setCookie(c, CONSOLE_COOKIE, consoleCookieValue(token), {
    httpOnly: true,
    sameSite: 'Strict',
    path: '/',
    secure,
  });
}
