import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { UI_PREFIX } from '../ui-paths.js';
import { UI_OPEN_AUTH, cookieSession, nextProblem, safeNext, signInCookie, signOutCookie } from '../ui-auth.js';
import { crossSiteReason } from '../ui-same-origin.js';
import type { UiOptions } from '../ui-options.js';
import { renderErrorPage } from '../views/error-view.js';
import { renderLoginPage } from '../views/login-view.js';

/** Largest sign-in form body accepted, in bytes. */
export const MAX_LOGIN_BODY_BYTES = 4096;

function sameToken(given: string, token: string): boolean {
  // Digests first: equal lengths for timingSafeEqual, and the time reveals nothing of the token.
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(token, 'utf8').digest();
  return timingSafeEqual(a, b);
}

/**
 * `GET /ui/login` (the form), `POST /ui/login` (form body `token`, `next`: starts a sign-in and
 * returns to `next`), `POST /ui/logout` (ends it: the id is deleted, so a copy of the cookie is
 * dead too). Both posts are refused (403) when a browser marks them cross-site, before the token
 * is compared or counted. Without a token configured, the form just returns home.
 */
export async function loginRoutes(app: FastifyInstance, opts: UiOptions): Promise<void> {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: MAX_LOGIN_BODY_BYTES }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
  const secure = opts.secureCookie === true;

  app.get('/login', { config: UI_OPEN_AUTH }, async (req, reply) => {
    if (opts.authToken === undefined) return reply.code(303).header('location', `${UI_PREFIX}/`).send();
    const next = safeNext((req.query as Record<string, unknown>).next);
    return reply.type('text/html; charset=utf-8').send(renderLoginPage({ next }).value);
  });

  app.post('/login', { config: UI_OPEN_AUTH }, async (req, reply) => {
    const crossSite = crossSiteReason(req);
    if (crossSite !== undefined) return refuseCrossSite(reply, 'sign-in', crossSite);
    const body = (req.body ?? {}) as Record<string, unknown>;
    const problem = nextProblem(body.next);
    if (problem !== undefined) {
      return reply.code(400).type('text/html; charset=utf-8').send(renderLoginPage({ next: `${UI_PREFIX}/`, badRequest: problem }).value);
    }
    const next = safeNext(body.next);
    if (opts.authToken === undefined || opts.sessions === undefined) return reply.code(303).header('location', next).send();
    const wait = opts.throttle?.retryAfterSeconds(req.ip) ?? 0;
    if (wait > 0) {
      return reply.code(429).header('retry-after', String(wait)).type('text/html; charset=utf-8').send(renderLoginPage({ next, throttledSeconds: wait }).value);
    }
    if (typeof body.token !== 'string' || !sameToken(body.token, opts.authToken)) {
      opts.throttle?.failed(req.ip);
      return reply.code(401).type('text/html; charset=utf-8').send(renderLoginPage({ next, failed: true }).value);
    }
    const id = opts.sessions.create();
    return reply.code(303).header('set-cookie', signInCookie(id, opts.sessions.lifetimeMs, secure)).header('location', next).send();
  });

  app.post('/logout', { config: UI_OPEN_AUTH }, async (req, reply) => {
    const crossSite = crossSiteReason(req);
    if (crossSite !== undefined) return refuseCrossSite(reply, 'sign-out', crossSite);
    const id = cookieSession(req);
    if (id !== undefined) opts.sessions?.revoke(id);
    return reply.code(303).header('set-cookie', signOutCookie(secure)).header('location', `${UI_PREFIX}/login`).send();
  });
}

function refuseCrossSite(reply: FastifyReply, what: string, reason: string): FastifyReply {
  return reply
    .code(403)
    .type('text/html; charset=utf-8')
    .send(renderErrorPage(403, `Cross-site ${what} refused (${reason}): use the form on this detector's own /ui/login page.`).value);
}
