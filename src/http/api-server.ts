import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { ForkwatchError, createError, type ErrorCode } from '../errors.js';
import type { SessionLineage } from '../model/lineage.js';
import type { RenderedMetrics } from '../metrics/render-metrics.js';
import type { Store } from '../storage/store.js';
import { API_V1, findingJson } from './api-finding-json.js';
import { parseFindingsQuery } from './api-findings-query.js';
import { askPeers, checkSessionKey, isFanOutRequest, isFindingsPage, mergeFindingPages, peerFindingsTarget, peerSessionTarget } from './api-peers.js';
import type { PeerOptions, UnavailableReplica } from './api-peers.js';
import { sessionAnswer } from './session-answer.js';
import { installRouteAuth, type RouteAuthConfig } from './route-auth.js';
import { registerUi } from '../ui/ui-plugin.js';
import type { UiOptions } from '../ui/ui-options.js';
import { UiSessions } from '../ui/ui-sessions.js';
import { AuthThrottle, DEFAULT_AUTH_FAILURES_PER_MINUTE } from './auth-throttle.js';
import { applyConnectionLimit, fastifyLimitOptions, type ServerLimits } from './server-limits.js';

export interface ApiServerOptions extends ServerLimits {
  store: Store;
  /** The engine's live lineage of a session key, or undefined when it no longer holds it. */
  lineage: (key: string) => SessionLineage | undefined;
  /** Renders `/metrics` for an `Accept` header (a DetectorMetrics fits); `/metrics` is 404 without it. */
  metrics?: { render(accept?: string): Promise<RenderedMetrics> };
  /** When set, `/api/*` needs `Authorization: Bearer <authToken>` (decided per route: see route-auth.ts). */
  authToken?: string;
  /** Also require the token on `/metrics`, `/healthz`, `/readyz`; default false. */
  metricsAuth?: boolean;
  /** Readiness for `/readyz`. */
  ready: () => boolean;
  /** Why the detector is not ready (e.g. the storage error), given in `/readyz`'s `reason`. */
  notReadyReason?: () => string | undefined;
  /** Request and error logging; default none. */
  logger?: FastifyBaseLogger;
  /**
   * Other replicas: `GET /api/v1/findings` and `/api/v1/sessions/:key` fan out to them and merge,
   * naming those that did not answer. Default: none (this replica answers alone).
   */
  peers?: Omit<PeerOptions, 'authToken'>;
  /**
   * Wrong tokens one client address may present per minute (bearer header or the sign-in form)
   * before its further attempts get 429 for the rest of the minute; 0 = off. Default 20.
   */
  authFailuresPerMinute?: number;
  /** The incident view's sign-in: `Secure` cookie, sign-in lifetime and table size (src/ui/ui-sessions.ts for defaults). */
  ui?: { cookieSecure?: boolean; sessionTtlMs?: number; maxSessions?: number };
  /** Clock for relative `since` values, epoch ms; default `Date.now`. */
  now?: () => number;
}

/** The body of every error answer. */
export interface ApiErrorBody {
  code: ErrorCode;
  message: string;
  statusCode: number;
}

const TOKEN: { config: RouteAuthConfig } = { config: { auth: 'token' } };
const METRICS: { config: RouteAuthConfig } = { config: { auth: 'metrics' } };
/** Longest URL echoed back in a 404 message, in characters. */
const MAX_ECHOED_URL = 200;

/**
 * Builds (does not start) the detector's HTTP server: the JSON API under `/api/v1`, the incident
 * view under `/ui` (src/ui), `/metrics`, `/healthz`, `/readyz`. Every error, fastify's own included, is answered as
 * `{ code, message, statusCode }` with a code from docs/errors.md.
 */
export async function createApiServer(options: ApiServerOptions): Promise<FastifyInstance> {
  const now = options.now ?? Date.now;
  const limits = fastifyLimitOptions(options);
  const app: FastifyInstance = options.logger
    ? (Fastify({ loggerInstance: options.logger, ...limits }) as unknown as FastifyInstance)
    : Fastify({ logger: false, ...limits });
  applyConnectionLimit(app, options);

  const failuresPerMinute = options.authFailuresPerMinute ?? DEFAULT_AUTH_FAILURES_PER_MINUTE;
  // Two counts: the sign-in form's and the bearer header's. A page of another site can make the
  // operator's browser post to the form (cross-site posts are refused, but a browser that marks
  // them with neither Origin nor Sec-Fetch-Site would slip by), never send a bearer header
  // (that needs a CORS preflight this server does not grant): a form lockout leaves the API open.
  const throttle = new AuthThrottle({ failuresPerMinute, now });
  const formThrottle = new AuthThrottle({ failuresPerMinute, now });
  installRouteAuth(app, {
    ...(options.authToken !== undefined ? { token: options.authToken } : {}),
    metricsAuth: options.metricsAuth === true,
    deny: (_req, reply) => sendError(reply, createError('FORKWATCH_ERR_UNAUTHORIZED')),
    throttle: { limiter: throttle, answer: (_req, reply, wait) => sendError(reply, createError('FORKWATCH_ERR_AUTH_THROTTLED', String(wait))) },
  });

  app.setErrorHandler((err: FastifyError | ForkwatchError, req: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof ForkwatchError) {
      if (err.statusCode >= 500) req.log.error({ err }, 'request failed');
      return sendError(reply, err);
    }
    const status = typeof err.statusCode === 'number' ? err.statusCode : 500;
    if (status >= 400 && status < 500) {
      // fastify's own message says what was wrong better than our template would
      const e = createError(clientErrorCode(status));
      e.message = err.message;
      return sendError(reply, e, status);
    }
    req.log.error({ err }, 'request failed');
    return sendError(reply, createError('FORKWATCH_ERR_INTERNAL', `${req.method} ${req.routeOptions.url ?? 'request'}`));
  });

  app.setNotFoundHandler((req, reply) => {
    const url = req.url.length > MAX_ECHOED_URL ? `${req.url.slice(0, MAX_ECHOED_URL)}…` : req.url;
    return sendError(reply, createError('FORKWATCH_ERR_NOT_FOUND', `route ${req.method} ${url}`));
  });

  app.addHook('onSend', async (req, reply, payload) => {
    if (req.routeOptions.url?.startsWith(`${API_V1}/`)) reply.header('cache-control', 'no-store');
    return payload;
  });

  const peers: PeerOptions | undefined =
    options.peers && options.peers.urls.length > 0 ? { ...options.peers, ...(options.authToken ? { authToken: options.authToken } : {}) } : undefined;
  const fanOut = (req: FastifyRequest): boolean => peers !== undefined && !isFanOutRequest(req.headers, req.query);

  app.get(`${API_V1}/findings`, TOKEN, async (req) => {
    const query = parseFindingsQuery(req.query as Record<string, unknown>, now());
    const page = options.store.listFindings(query);
    const local = { items: page.items.map(findingJson), nextCursor: page.nextCursor ?? null };
    if (!fanOut(req)) return local;
    const answers = await askPeers(peers!, peerFindingsTarget(req.query as Record<string, unknown>));
    const pages = [local];
    const unavailable: UnavailableReplica[] = [];
    for (const a of answers) {
      if ('error' in a) unavailable.push({ replica: a.replica, reason: a.error });
      else if (a.status !== 200 || !isFindingsPage(a.body)) unavailable.push({ replica: a.replica, reason: `HTTP ${a.status}` });
      else pages.push(a.body as typeof local);
    }
    return { ...mergeFindingPages(pages, query.limit ?? page.items.length), replicas: peers!.urls.length + 1, unavailable };
  });

  app.get<{ Params: { id: string } }>(`${API_V1}/findings/:id`, TOKEN, async (req) => {
    const f = options.store.getFinding(req.params.id);
    if (!f) throw createError('FORKWATCH_ERR_NOT_FOUND', `finding ${JSON.stringify(req.params.id)}`);
    return findingJson(f);
  });

  app.get<{ Params: { key: string } }>(`${API_V1}/sessions/:key`, TOKEN, async (req, reply) => {
    const key = req.params.key;
    checkSessionKey(key);
    const answer = sessionAnswer(key, options.lineage, options.store);
    const local = answer ? { ...answer.lineage, findings: answer.findings.map(findingJson) } : undefined;
    if (!fanOut(req)) {
      if (!local) throw createError('FORKWATCH_ERR_NOT_FOUND', `session ${JSON.stringify(key)}`);
      return local;
    }
    const answers = await askPeers(peers!, peerSessionTarget(key));
    const found: Array<{ replica: string; body: SessionAnswer }> = local ? [{ replica: 'local', body: local as SessionAnswer }] : [];
    const unavailable: UnavailableReplica[] = [];
    for (const a of answers) {
      if ('error' in a) unavailable.push({ replica: a.replica, reason: a.error });
      else if (a.status === 200 && isSessionAnswer(a.body)) found.push({ replica: a.replica, body: a.body });
      else if (a.status !== 404) unavailable.push({ replica: a.replica, reason: `HTTP ${a.status}` });
    }
    if (found.length === 0) {
      const e = createError('FORKWATCH_ERR_NOT_FOUND', `session ${JSON.stringify(key)}${unavailable.length ? ` (not answering: ${unavailable.map((u) => u.replica).join(', ')})` : ''}`);
      return reply.code(404).type('application/json; charset=utf-8').send({ code: e.code, message: e.message, statusCode: 404, unavailable });
    }
    // Normally one replica holds the session; after a rescale it may be split: the live lineage
    // wins, and the findings of every replica that holds it are listed once each.
    found.sort((a, b) => Number(b.body.source === 'live') - Number(a.body.source === 'live') || b.body.findings.length - a.body.findings.length);
    const seen = new Set<string>();
    const merged: SessionAnswer['findings'] = [];
    for (const f of found) {
      for (const x of f.body.findings) {
        if (seen.has(x.id)) continue;
        seen.add(x.id);
        merged.push(x);
      }
    }
    return { ...found[0]!.body, findings: merged, heldBy: found.map((f) => f.replica), unavailable };
  });

  const ui: UiOptions = { store: options.store, lineage: options.lineage, now, throttle: formThrottle, secureCookie: options.ui?.cookieSecure === true };
  if (options.authToken !== undefined) {
    ui.authToken = options.authToken;
    ui.sessions = new UiSessions({
      now,
      ...(options.ui?.sessionTtlMs !== undefined ? { ttlMs: options.ui.sessionTtlMs } : {}),
      ...(options.ui?.maxSessions !== undefined ? { maxSessions: options.ui.maxSessions } : {}),
    });
  }
  await registerUi(app, ui);

  if (options.metrics) {
    const metrics = options.metrics;
    app.get('/metrics', METRICS, async (req, reply) => {
      const out = await metrics.render(req.headers.accept);
      reply.header('content-type', out.contentType);
      return out.body;
    });
  }

  app.get('/healthz', METRICS, async () => ({ status: 'ok' }));

  app.get('/readyz', METRICS, async (_req, reply) => {
    let ready = false;
    try {
      ready = options.ready();
    } catch {
      ready = false;
    }
    reply.code(ready ? 200 : 503);
    if (ready) return { status: 'ready' };
    let reason: string | undefined;
    try {
      reason = options.notReadyReason?.();
    } catch {
      reason = undefined;
    }
    return reason === undefined ? { status: 'not_ready' } : { status: 'not_ready', reason };
  });

  return app;
}

interface SessionAnswer {
  source: string;
  findings: Array<{ id: string }>;
}

function isSessionAnswer(body: unknown): body is SessionAnswer {
  const b = body as SessionAnswer | null;
  return typeof b === 'object' && b !== null && typeof b.source === 'string' && Array.isArray(b.findings) && b.findings.every((f) => typeof f?.id === 'string');
}

function clientErrorCode(status: number): ErrorCode {
  switch (status) {
    case 401:
      return 'FORKWATCH_ERR_UNAUTHORIZED';
    case 404:
      return 'FORKWATCH_ERR_NOT_FOUND';
    case 413:
      return 'FORKWATCH_ERR_BODY_TOO_LARGE';
    case 415:
      return 'FORKWATCH_ERR_UNSUPPORTED_MEDIA_TYPE';
    default:
      return 'FORKWATCH_ERR_BAD_QUERY';
  }
}

/** `status` overrides the code's own status where fastify's error knew better (e.g. 405, 414). */
function sendError(reply: FastifyReply, err: ForkwatchError, status: number = err.statusCode): FastifyReply {
  const body: ApiErrorBody = { code: err.code, message: err.message, statusCode: status };
  return reply.code(status).type('application/json; charset=utf-8').send(body);
}
