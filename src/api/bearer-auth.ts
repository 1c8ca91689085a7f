import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { ApiProblem, problemResponse } from './problem';

/** SHA-256 of a token: both sides of the comparison have one length, so it takes the same time whatever was sent. */
const digest = (token: string) => createHash('sha256').update(token, 'utf8').digest();

/**
 * Requires `Authorization: Bearer <token>` on every request; anything else is a 401 problem with
 * `WWW-Authenticate: Bearer`. The comparison runs in constant time (a timing side channel cannot
 * guess the token byte by byte).
 */
export function bearerAuth(token: string): MiddlewareHandler {
  const expected = digest(token);
  return async (c, next) => {
    const header = c.req.header('authorization');
    const match = header ? /^Bearer\s+(.+)$/i.exec(header.trim()) : null;
    if (!match || !timingSafeEqual(digest(match[1]!), expected)) {
      c.header('WWW-Authenticate', 'Bearer realm="keel"');
      const detail = header ? 'the bearer token is wrong: send the server’s KEEL_API_TOKEN' : 'send `Authorization: Bearer <KEEL_API_TOKEN>`';
      return problemResponse(c, new ApiProblem(401, 'unauthorized', detail, 'Authorization'));
    }
    await next();
  };
}
