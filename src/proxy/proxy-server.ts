import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { componentLogger, DEFAULT_MAX_BUFFERED_EVENTS, DEFAULT_MAX_BUFFERED_EVENTS_PER_SESSION } from './building-blocks.js';
import { Deadlines } from './deadlines.js';
import { EventHistory } from './event-history.js';
import { handleExchange } from './exchange.js';
import type { ProxyContext } from './proxy-context.js';
import { DEFAULT_PROXY_REISSUE_WINDOW_MS } from './stateless-calls.js';
import { PendingRequests } from './pending-requests.js';
import { resolveProxyOptions, type ProxyOptions, type ResolvedProxyOptions } from './proxy-options.js';
import { newProxyStats, type ProxyStats } from './proxy-stats.js';
import { SessionTable } from './session-table.js';
import { WireSpans } from './wire-spans.js';

/** A running `forkwatch proxy`. */
export interface ForkwatchProxy {
  /** `http://host:port` it listens on (the port the OS chose when asked for 0). */
  readonly url: string;
  readonly port: number;
  readonly options: ResolvedProxyOptions;
  /** Counters; `sessionsTracked` and `spanFailures` are read fresh. */
  stats(): ProxyStats;
  /** Stops accepting, closes open streams (their upstream requests with them) and keep-alive sockets. */
  close(): Promise<void>;
}

/**
 * Starts the sidecar proxy in front of `options.upstream`. Throws FORKWATCH_ERR_CONFIG_INVALID
 * on bad options, and the listen error (EADDRINUSE...) when the port cannot be bound.
 */
export async function createForkwatchProxy(options: ProxyOptions): Promise<ForkwatchProxy> {
  const opts = resolveProxyOptions(options);
  const logger = componentLogger('proxy');
  const spans = new WireSpans({ tracerProvider: opts.tracerProvider, salt: opts.salt, recordRawSessionId: opts.recordRawSessionId, guard: opts.guard, logger });
  const stats = newProxyStats();
  const history = new EventHistory(
    spans,
    { perSession: DEFAULT_MAX_BUFFERED_EVENTS_PER_SESSION, maxEvents: DEFAULT_MAX_BUFFERED_EVENTS },
    opts.requestSpanDelayMs <= 0,
    () => void stats.malformedSse++,
  );
  const ctx: ProxyContext = {
    opts,
    // Keep-alive to the upstream: a new TCP connection per call was most of a bare proxy's cost.
    agent: new http.Agent({ keepAlive: true, maxSockets: opts.upstreamMaxSockets, maxFreeSockets: Math.min(opts.upstreamMaxSockets, 64) }),
    table: new SessionTable(opts.maxSessions, opts.sessionIdleTtlMs, opts.maxTrackedEventIds),
    spans,
    stats,
    requests: new PendingRequests(spans, opts.requestSpanDelayMs, opts.maxSessions, (session) => history.moment(session, false), DEFAULT_PROXY_REISSUE_WINDOW_MS),
    history,
    deadlines: new Deadlines(),
    exchanges: 0,
    probes: new Set(),
  };
  const server = http.createServer(
    {
      keepAlive: true,
      // A client's request (headers and body) must arrive within these, as on the detector's ports:
      // slow bodies would otherwise hold connections (and the --max-connections slots) for ever.
      // They bound receiving the request only: an answer (an SSE stream) may last longer, bounded
      // by --stream-idle-timeout-ms instead. Checked every half headers-timeout, at most every second.
      requestTimeout: opts.clientRequestTimeoutMs,
      headersTimeout: opts.clientHeadersTimeoutMs,
      connectionsCheckingInterval: Math.max(100, Math.min(1000, opts.clientHeadersTimeoutMs / 2)),
    },
    (req, res) => {
    try {
      handleExchange(ctx, req, res);
    } catch (err) {
      logger.error('exchange failed', err);
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    }
    },
  );
  server.maxConnections = opts.maxConnections;
  server.on('drop', () => stats.overloaded++);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = opts.host === '0.0.0.0' || opts.host === '::' ? '127.0.0.1' : opts.host;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    options: opts,
    stats: () => ({ ...stats, sessionsTracked: ctx.table.size, sessionsForgotten: ctx.table.forgotten, spanFailures: spans.failures }),
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      // What a probe finds (a new life) is recorded after its exchange ended: let it land first.
      await Promise.all([...ctx.probes]);
      ctx.agent.destroy();
      await closed;
    },
  };
}
