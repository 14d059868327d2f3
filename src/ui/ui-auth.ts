import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RouteAuthConfig } from '../http/route-auth.js';
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

/**
 * True when the request carries the sign-in cookie for `token`: the credential check the UI adds
 * to src/http/route-auth.ts for its `token-or-cookie` routes (the bearer token is checked there).
 */
export function cookieMatches(req: FastifyRequest, token: string): boolean {
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
 * The route config of every page (src/http/route-auth.ts decides): with a token set, the bearer
 * token or the sign-in cookie; a browser without either is sent to the sign-in form.
 */
export const UI_PAGE_AUTH = { auth: 'token-or-cookie', onUnauthorized: refuse } as const satisfies RouteAuthConfig;

/** The route config of the stylesheet, icon, sign-in form and sign-out: open (they hold no data). */
export const UI_OPEN_AUTH = { auth: 'open' } as const satisfies RouteAuthConfig;
