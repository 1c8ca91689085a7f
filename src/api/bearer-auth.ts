import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { consoleCookieOf, consoleCookieValue } from '../console/console-cookie';
import { ApiProblem, problemResponse } from './problem';

/** SHA-256 of a token: both sides of the comparison have one length, so it takes the same time whatever was sent. */
const digest = (token: string) => createHash('sha256').update(token, 'utf8').digest();

/** Whether `sent` is `expected`, compared in constant time. */
function sameSecret(sent: string, expected: Buffer): boolean {
  return timingSafeEqual(digest(sent), expected);
}

/**
 * Requires `Authorization: Bearer <token>`, or the console's cookie (set by its login form), on every
 * request; anything else is a 401 problem with `WWW-Authenticate: Bearer`. The comparisons run in
 * constant time (a timing side channel cannot guess the token byte by byte).
 */
export function bearerAuth(token: string): MiddlewareHandler {
  const expected = digest(token);
  const expectedCookie = digest(consoleCookieValue(token));
  return async (c, next) => {
    const header = c.req.header('authorization');
    const match = header ? /^Bearer\s+(.+)$/i.exec(header.trim()) : null;
    const cookie = consoleCookieOf(c);
    const byHeader = match ? sameSecret(match[1]!, expected) : false;
    const byCookie = !match && cookie !== undefined && sameSecret(cookie, expectedCookie);
    if (!byHeader && !byCookie) {
      c.header('WWW-Authenticate', 'Bearer realm="keel"');
      const detail = header
        ? 'the bearer token is wrong: send the server’s KEEL_API_TOKEN'
        : 'send `Authorization: Bearer <KEEL_API_TOKEN>`, or log in to the console at /';
      return problemResponse(c, new ApiProblem(401, 'unauthorized', detail, 'Authorization'));
    }
    await next();
  };
}
