import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RouteAuthConfig } from '../http/route-auth.js';
import { UI_PREFIX } from './ui-paths.js';
import type { UiSessions } from './ui-sessions.js';

/** Name of the incident view's session cookie. */
export const UI_COOKIE = 'forkwatch_ui';

/**
 * `Set-Cookie` for a signed-in browser: the sign-in's random id (src/ui/ui-sessions.ts; never the
 * token, nor anything derived from it), HttpOnly, SameSite=Strict, Path=/ui, Max-Age the sign-in's
 * lifetime, and `Secure` when asked (`--ui-cookie-secure`, for a detector behind TLS).
 */
export function signInCookie(sessionId: string, maxAgeMs: number, secure: boolean): string {
  return `${UI_COOKIE}=${sessionId}; Path=${UI_PREFIX}; Max-Age=${Math.floor(maxAgeMs / 1000)}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/** `Set-Cookie` that removes the session cookie. */
export function signOutCookie(secure: boolean): string {
  return `${UI_COOKIE}=; Path=${UI_PREFIX}; HttpOnly; SameSite=Strict; Max-Age=0${secure ? '; Secure' : ''}`;
}

/** The sign-in id the request's cookie carries, if any. */
export function cookieSession(req: FastifyRequest): string | undefined {
  const header = req.headers.cookie;
  if (typeof header !== 'string') return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === UI_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * True when the request carries the cookie of a live sign-in: the credential check the UI adds
 * to src/http/route-auth.ts for its `token-or-cookie` routes (the bearer token is checked there).
 */
export function cookieMatches(req: FastifyRequest, sessions: UiSessions): boolean {
  const id = cookieSession(req);
  return id !== undefined && id !== '' && sessions.valid(id);
}

/**
 * Why `next` cannot be returned to at all (a 400), or undefined. Only printable ASCII: a header
 * cannot carry CR, LF, NUL or U+2028, and a /ui path never needs them raw (they are
 * percent-encoded in a real one).
 */
export function nextProblem(next: unknown): string | undefined {
  if (next === undefined) return undefined;
  if (typeof next !== 'string') return 'next must be given once';
  if (!/^[\x21-\x7e]*$/.test(next)) return 'next holds a control, space or non-ASCII character: percent-encode it';
  return undefined;
}

/**
 * A `next` path to return to after signing in: a /ui path on this origin, or `/ui/`. Refuses
 * anything that could leave the origin (`//host`, `/ui/../`, backslashes, schemes).
 */
export function safeNext(next: unknown): string {
  if (typeof next !== 'string' || next.length > 2048 || nextProblem(next) !== undefined) return `${UI_PREFIX}/`;
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
