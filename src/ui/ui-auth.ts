import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { bearerMatches } from '../http/api-auth.js';
import { UI_PREFIX } from './ui-paths.js';

/** Name of the incident view's session cookie. */
export const UI_COOKIE = 'forkwatch_ui';


/**
 * The cookie's value: an HMAC of a fixed label under the token. The cookie never holds the token
 * itself, and changing the token signs every browser out.
 */
export function cookieValue(token: string): string {
  return createHmac('sha256', token).update('forkwatch-ui-session-v1').digest('base64url');
}

/** `Set-Cookie` for a signed-in browser: HttpOnly, SameSite=Strict, Path=/ui, no Max-Age (browser session). */
export function signInCookie(token: string, secure: boolean): string {
  return `${UI_COOKIE}=${cookieValue(token)}; Path=${UI_PREFIX}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/** `Set-Cookie` that removes the session cookie. */
export function signOutCookie(): string {
  return `${UI_COOKIE}=; Path=${UI_PREFIX}; HttpOnly; SameSite=Strict; Max-Age=0`;
}

function cookieOf(header: string | undefined, name: string): string | undefined {
  if (typeof header !== 'string') return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** True when the request carries the session cookie for `token`, or `Authorization: Bearer <token>`. */
export function uiAuthorized(req: FastifyRequest, token: string): boolean {
  if (bearerMatches(req.headers.authorization, token)) return true;
  const got = cookieOf(req.headers.cookie, UI_COOKIE);
  if (got === undefined) return false;
  const want = Buffer.from(cookieValue(token));
  const have = Buffer.from(got);
  return have.length === want.length && timingSafeEqual(have, want);
}

/**
 * A `next` path to return to after signing in: a /ui path on this origin, or `/ui/`. Refuses
 * anything that could leave the origin (`//host`, `/ui/../`, backslashes, schemes).
 */
export function safeNext(next: unknown): string {
  if (typeof next !== 'string' || next.length > 2048) return `${UI_PREFIX}/`;
  // Browsers treat `%2e%2e` as `..`: refused like dot segments, so `next` stays under /ui.
  if (!next.startsWith(`${UI_PREFIX}/`) || next.includes('\\') || /\/\.\.?(\/|$)|%2e/i.test(next) || next.includes('//')) return `${UI_PREFIX}/`;
  if (next.startsWith(`${UI_PREFIX}/login`)) return `${UI_PREFIX}/`;
  return next;
}

/**
 * Answers a request that lacks the cookie: a page load (GET/HEAD asking for HTML) is sent to the
 * sign-in form with the page to return to; anything else gets 401.
 */
export function refuse(req: FastifyRequest, reply: FastifyReply): FastifyReply {
  const wantsHtml = (req.method === 'GET' || req.method === 'HEAD') && !/^application\/json/i.test(req.headers.accept ?? '');
  if (wantsHtml) {
    const next = safeNext(req.url);
    return reply.code(303).header('location', `${UI_PREFIX}/login?next=${encodeURIComponent(next)}`).send();
  }
  reply.header('www-authenticate', 'Bearer');
  return reply.code(401).type('text/plain; charset=utf-8').send('sign in at /ui/login');
}

/**
 * The route config of every page: with a token set, the bearer token or the sign-in cookie, and a
 * browser without either is sent to the sign-in form. Names as src/http/route-auth.ts (branch
 * `harden`) has them, so either check reads the same declaration.
 */
export const UI_PAGE_AUTH = { auth: 'token-or-cookie', onUnauthorized: refuse } as const;

/** The route config of the stylesheet, icon and sign-in form: open. */
export const UI_OPEN_AUTH = { auth: 'open' } as const;
