import type { FastifyInstance } from 'fastify';

/** Limits both HTTP ports apply to their connections. */
export interface ServerLimits {
  /** Longest time to receive a whole request (headers and body), ms; then 408 and close. Default 30000. */
  requestTimeoutMs?: number;
  /** Longest time to receive a request's headers, ms; at most requestTimeoutMs. Default 10000. */
  headersTimeoutMs?: number;
  /** Open connections at once; further ones are closed on accept. Default 1024. */
  maxConnections?: number;
}

/** Defaults of {@link ServerLimits}. */
export const DEFAULT_SERVER_LIMITS = Object.freeze({
  requestTimeoutMs: 30_000, // milliseconds
  headersTimeoutMs: 10_000, // milliseconds
  maxConnections: 1024, // connections
});

/** The fastify options that carry {@link ServerLimits}. */
export function fastifyLimitOptions(limits: ServerLimits): { requestTimeout: number; http: { headersTimeout: number; requestTimeout: number; connectionsCheckingInterval: number } } {
  const requestTimeout = pos(limits.requestTimeoutMs, DEFAULT_SERVER_LIMITS.requestTimeoutMs);
  const headersTimeout = Math.min(requestTimeout, pos(limits.headersTimeoutMs, DEFAULT_SERVER_LIMITS.headersTimeoutMs));
  return {
    requestTimeout,
    // Node checks these timeouts every connectionsCheckingInterval (30 s by default): a slow body
    // (one byte every few seconds) would otherwise outlive a short timeout by that much.
    http: { headersTimeout, requestTimeout, connectionsCheckingInterval: Math.max(100, Math.min(1000, headersTimeout / 2)) },
  };
}

/** Applies the connection limit once the server exists. */
export function applyConnectionLimit(app: FastifyInstance, limits: ServerLimits): void {
  app.server.maxConnections = pos(limits.maxConnections, DEFAULT_SERVER_LIMITS.maxConnections);
}

function pos(v: number | undefined, dflt: number): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : dflt;
}
