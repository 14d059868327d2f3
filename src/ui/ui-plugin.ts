import type { FastifyError, FastifyInstance } from 'fastify';
import { addCredentialCheck } from '../http/route-auth.js';
import { assetsRoutes } from './routes/assets-route.js';
import { findingRoutes } from './routes/finding-route.js';
import { findingsListRoutes } from './routes/findings-list-route.js';
import { loginRoutes } from './routes/login-route.js';
import { sessionRoutes } from './routes/session-route.js';
import { UI_OPEN_AUTH, cookieMatches } from './ui-auth.js';
import type { UiOptions } from './ui-options.js';
import { UI_PREFIX } from './ui-paths.js';
import { setSecurityHeaders } from './ui-security-headers.js';
import { renderErrorPage } from './views/error-view.js';

/**
 * The incident view as a fastify plugin; register it with `{ prefix: '/ui' }` beside `/api/v1` on a
 * server with src/http/route-auth.ts installed. Encapsulated: its hooks, error and not-found
 * handlers and form parser apply to /ui routes only. Every route declares `config.auth`: `open`
 * (assets, sign-in) or `token-or-cookie` (pages: the bearer token or the sign-in cookie).
 */
export async function uiPlugin(app: FastifyInstance, pluginOptions: UiOptions): Promise<void> {
  // Only what the routes need: passing fastify's own plugin options on (prefix) would nest it again.
  const { store, lineage, authToken, secureCookie, sessions, now, throttle } = pluginOptions;
  const opts: UiOptions = {
    store,
    lineage,
    ...(authToken !== undefined ? { authToken } : {}),
    ...(secureCookie !== undefined ? { secureCookie } : {}),
    ...(sessions !== undefined ? { sessions } : {}),
    ...(now ? { now } : {}),
    ...(throttle ? { throttle } : {}),
  };
  const signedIn = authToken !== undefined;

  // Auth is src/http/route-auth.ts's, decided on each matched route's config.auth: the UI only
  // adds its cookie as a credential. Without route auth on the server this throws: fail closed.
  if (authToken !== undefined) {
    if (sessions === undefined) throw new TypeError('the incident view needs its sign-in table (sessions) when a token is set');
    addCredentialCheck(app, (req) => cookieMatches(req, sessions));
  }

  app.addHook('onSend', async (req, reply, payload) => {
    setSecurityHeaders(reply, req.routeOptions.url?.startsWith(`${UI_PREFIX}/assets/`) === true && reply.statusCode === 200);
    return payload;
  });

  app.setErrorHandler((err: FastifyError, req, reply) => {
    const status = typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 500) req.log.error({ err }, 'incident view failed');
    const message = status === 500 ? 'The detector failed to answer this page; its log says why.' : err.message;
    return reply.code(status).type('text/html; charset=utf-8').send(renderErrorPage(status, message).value);
  });

  app.setNotFoundHandler((_req, reply) => reply.code(404).type('text/html; charset=utf-8').send(renderErrorPage(404, 'No such page.').value));

  await app.register(assetsRoutes);
  await app.register(loginRoutes, opts);
  await app.register(findingsListRoutes, { ...opts, signedIn });
  await app.register(findingRoutes, { ...opts, signedIn });
  await app.register(sessionRoutes, { ...opts, signedIn });
}

/** Registers the incident view under `/ui` (and answers `/ui` with a redirect to `/ui/`). */
export async function registerUi(app: FastifyInstance, opts: UiOptions): Promise<void> {
  app.get(UI_PREFIX, { config: UI_OPEN_AUTH }, async (_req, reply) => reply.code(308).header('location', `${UI_PREFIX}/`).send());
  await app.register(uiPlugin, { ...opts, prefix: UI_PREFIX });
}
