import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { bearerMatches } from './api-auth.js';
import type { AuthThrottle } from './auth-throttle.js';

/**
 * The auth decision every route declares in its fastify `config.auth`:
 * - `token`: needs `Authorization: Bearer <token>` when a token is configured;
 * - `metrics`: like `token`, but only when metrics auth is on (`/metrics`, `/healthz`, `/readyz`);
 * - `open`: never needs a credential;
 * - `token-or-cookie`: the bearer token, or any credential check added with {@link addCredentialCheck}
 *   (the web UI's session cookie); open when no token is configured.
 */
export type RouteAuth = 'token' | 'metrics' | 'open' | 'token-or-cookie';

const ROUTE_AUTHS: ReadonlySet<string> = new Set<RouteAuth>(['token', 'metrics', 'open', 'token-or-cookie']);

/** What a route puts in its fastify `config`. */
export interface RouteAuthConfig {
  auth: RouteAuth;
  /** Answers a refused request on this route instead of the server's default (e.g. a login page). */
  onUnauthorized?: (req: FastifyRequest, reply: FastifyReply) => unknown;
}

/**
 * A credential other than the bearer token, for `token-or-cookie` routes. True admits the request.
 * A check that throws or rejects counts as false.
 */
export type CredentialCheck = (req: FastifyRequest) => boolean | Promise<boolean>;

export interface RouteAuthOptions {
  /** The bearer token; unset means every route is open. */
  token?: string;
  /** When true, `metrics` routes need the token too. Default false. */
  metricsAuth?: boolean;
  /** Answers a refused request (401) in the server's own format. */
  deny: (req: FastifyRequest, reply: FastifyReply) => unknown;
  /**
   * Counts wrong bearer tokens per client address; a request presenting a token from an address
   * past its limit is answered by `answer` (429) before the token is compared.
   */
  throttle?: { limiter: AuthThrottle; answer: (req: FastifyRequest, reply: FastifyReply, retryAfterSeconds: number) => unknown };
}

/** One registered route and its decision, for tests and audits. */
export interface RouteAuthEntry {
  method: string;
  url: string;
  auth: RouteAuth;
}

interface RouteAuthState {
  readonly options: RouteAuthOptions;
  readonly checks: CredentialCheck[];
  readonly routes: RouteAuthEntry[];
}

const kRouteAuth = Symbol('forkwatch.routeAuth');

/**
 * Makes every route of `app` (and of its child plugins) decide auth on the route that matched,
 * never on the raw URL: percent-encoding, absolute-form targets, dot segments and the like are
 * resolved by the router first, and the check reads the matched route's `config.auth`.
 * Registering a route without a valid `config.auth` throws at registration, so a route added
 * later cannot forget it. Call before any route is registered. Unmatched requests carry no
 * decision and go to the not-found handler, which reveals nothing.
 */
export function installRouteAuth(app: FastifyInstance, options: RouteAuthOptions): void {
  const state: RouteAuthState = { options, checks: [], routes: [] };
  app.decorate(kRouteAuth, state);
  app.addHook('onRoute', (route: RouteOptions) => {
    const auth = (route.config as Partial<RouteAuthConfig> | undefined)?.auth;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (typeof auth !== 'string' || !ROUTE_AUTHS.has(auth)) {
      throw new TypeError(
        `route ${methods.join(',')} ${route.url} has no auth decision: set config.auth to one of ${[...ROUTE_AUTHS].join(', ')}`,
      );
    }
    for (const method of methods) state.routes.push({ method, url: route.url, auth: auth as RouteAuth });
  });
  app.addHook('onRequest', async (req, reply) => {
    const config = req.routeOptions.config as Partial<RouteAuthConfig> | undefined;
    const auth = config?.auth;
    if (auth === undefined) return; // no route matched: the not-found handler answers 404
    const throttle = options.throttle;
    // Only a request that presents a token can be a guess: a signed-in page view (cookie) from the
    // same address as a guesser is not held up.
    if (throttle !== undefined && req.headers.authorization !== undefined && needsCredential(state, auth)) {
      const wait = throttle.limiter.retryAfterSeconds(req.ip);
      if (wait > 0) return throttle.answer(req, reply.header('retry-after', String(wait)), wait);
    }
    if (await admitted(state, auth, req)) return;
    // A missing credential is not a guess; a wrong one is.
    if (throttle !== undefined && req.headers.authorization !== undefined) throttle.limiter.failed(req.ip);
    reply.header('www-authenticate', 'Bearer');
    return (config?.onUnauthorized ?? options.deny)(req, reply);
  });
}

/**
 * Adds a credential accepted on `token-or-cookie` routes of the server that `app` belongs to
 * (a child plugin's instance works). Throws when `app` has no {@link installRouteAuth}.
 */
export function addCredentialCheck(app: FastifyInstance, check: CredentialCheck): void {
  stateOf(app).checks.push(check);
}

/** Every route registered on `app` with its auth decision, in registration order. */
export function listRouteAuth(app: FastifyInstance): readonly RouteAuthEntry[] {
  return stateOf(app).routes;
}

function stateOf(app: FastifyInstance): RouteAuthState {
  const state = (app as unknown as Record<symbol, RouteAuthState | undefined>)[kRouteAuth];
  if (!state) throw new TypeError('installRouteAuth was not called on this server');
  return state;
}

function needsCredential(state: RouteAuthState, auth: RouteAuth): boolean {
  if (state.options.token === undefined || auth === 'open') return false;
  return auth !== 'metrics' || state.options.metricsAuth === true;
}

async function admitted(state: RouteAuthState, auth: RouteAuth, req: FastifyRequest): Promise<boolean> {
  const { token, metricsAuth } = state.options;
  if (token === undefined || auth === 'open') return true;
  if (auth === 'metrics' && metricsAuth !== true) return true;
  if (bearerMatches(req.headers.authorization, token)) return true;
  if (auth !== 'token-or-cookie') return false;
  for (const check of state.checks) {
    try {
      if ((await check(req)) === true) return true;
    } catch {
      // a failing credential check admits nobody
    }
  }
  return false;
}
