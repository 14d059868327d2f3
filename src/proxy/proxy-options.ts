import type { TracerProvider } from '@opentelemetry/api';
import { createError } from '../errors.js';
import { DEFAULT_MAX_EVENT_CHARS, DEFAULT_MAX_TRACKED_EVENT_IDS, DEFAULT_REQUEST_SPAN_DELAY_MS } from './building-blocks.js';

/** Default `--host`: every interface, as a sidecar in a pod or compose network needs. */
export const DEFAULT_PROXY_HOST = '0.0.0.0';
/** Default `--port`. */
export const DEFAULT_PROXY_PORT = 8090;
/** Default `guardHoldMs`: how long the guard holds a resume's answer waiting for its first event, ms. */
export const DEFAULT_GUARD_HOLD_MS = 1000;
/** Default `connectTimeoutMs`: TCP connect to the upstream, ms (502 past it). */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5000;
/** Default `headersTimeoutMs`: from the request sent to the upstream's status line, ms (504 past it). */
export const DEFAULT_HEADERS_TIMEOUT_MS = 300_000;
/** Default `streamIdleTimeoutMs`: an answer body with no byte for this long is closed, ms. */
export const DEFAULT_STREAM_IDLE_TIMEOUT_MS = 900_000;
/** Default `maxSessions`: sessions tracked at once; past it the least recently used is forgotten. */
export const DEFAULT_MAX_SESSIONS = 10_000;
/** Default `sessionIdleTtlMs`: a session with no request for this long is forgotten, ms. */
export const DEFAULT_SESSION_IDLE_TTL_MS = 3_600_000;
/** Default `maxParseBytes`: largest POST body or JSON answer copied aside to read JSON-RPC ids, bytes. */
export const DEFAULT_MAX_PARSE_BYTES = 1024 * 1024;
/** Default `maxConnections`: client connections open at once (the total memory bound). */
export const DEFAULT_MAX_CONNECTIONS = 1024;
/** Default `maxInitializeBytes`: largest `initialize` answer `--guard` buffers to add the incarnation, bytes. */
export const DEFAULT_MAX_INITIALIZE_BYTES = 1024 * 1024;
/** Default `clientRequestTimeoutMs`: longest time to receive a whole client request (headers and body), ms; 408 past it (the detector's default). */
export const DEFAULT_CLIENT_REQUEST_TIMEOUT_MS = 30_000;
/** Default `clientHeadersTimeoutMs`: longest time to receive a client request's headers, ms (the detector's default). */
export const DEFAULT_CLIENT_HEADERS_TIMEOUT_MS = 10_000;
/** Default `upstreamMaxSockets`: keep-alive sockets to the upstream. */
export const DEFAULT_UPSTREAM_MAX_SOCKETS = 256;

/** Options of {@link createForkwatchProxy}. Every bound has a default (above). */
export interface ProxyOptions {
  /** Base URL of the MCP server, `http://host:port`; request paths are kept as they come. */
  upstream: string;
  /** Listen interface. Default {@link DEFAULT_PROXY_HOST}. */
  host?: string;
  /** Listen port; 0 = ephemeral. Default {@link DEFAULT_PROXY_PORT}. */
  port?: number;
  /** Enforce the resume decision boundary on the wire (docs/proxy.md). Default false: bytes unchanged. */
  guard?: boolean;
  /** Where spans go. Default: the global provider (none registered: nothing is recorded). */
  tracerProvider?: TracerProvider;
  /** FORKWATCH_SESSION_SALT. Default ''. */
  salt?: string;
  /** Record raw session ids as `mcp.session.id`. Default false (a bearer credential). */
  recordRawSessionId?: boolean;
  guardHoldMs?: number;
  connectTimeoutMs?: number;
  headersTimeoutMs?: number;
  streamIdleTimeoutMs?: number;
  maxSessions?: number;
  sessionIdleTtlMs?: number;
  /** Events larger than this (chars) pass through unrecorded. Default 1 Mi. */
  maxEventChars?: number;
  /** Event ids remembered per session. Default 1024. */
  maxTrackedEventIds?: number;
  maxParseBytes?: number;
  maxConnections?: number;
  /** Under `guard`: an `initialize` answer larger than this is refused (502), never held whole. Default 1 MiB. */
  maxInitializeBytes?: number;
  /** Time to receive a whole client request, ms; then 408 and the connection closes (answers may stream longer). Default 30 s. */
  clientRequestTimeoutMs?: number;
  /** Time to receive a client request's headers, ms; at most `clientRequestTimeoutMs`. Default 10 s. */
  clientHeadersTimeoutMs?: number;
  upstreamMaxSockets?: number;
  /** How long a request's `request.received` span waits for its answer, ms. Default 1000. */
  requestSpanDelayMs?: number;
}

export type ResolvedProxyOptions = Readonly<Required<Omit<ProxyOptions, 'tracerProvider'>>> & {
  readonly tracerProvider?: TracerProvider;
  readonly upstreamUrl: URL;
};

const COUNTS = [
  'guardHoldMs',
  'connectTimeoutMs',
  'headersTimeoutMs',
  'streamIdleTimeoutMs',
  'maxSessions',
  'sessionIdleTtlMs',
  'maxEventChars',
  'maxTrackedEventIds',
  'maxParseBytes',
  'maxConnections',
  'maxInitializeBytes',
  'clientRequestTimeoutMs',
  'clientHeadersTimeoutMs',
  'upstreamMaxSockets',
] as const;

/** Validates once and freezes; throws FORKWATCH_ERR_CONFIG_INVALID listing every problem. */
export function resolveProxyOptions(o: ProxyOptions): ResolvedProxyOptions {
  const problems: string[] = [];
  let upstreamUrl: URL | undefined;
  try {
    upstreamUrl = new URL(o.upstream);
    if (upstreamUrl.protocol !== 'http:') problems.push(`upstream must be an http:// URL, got ${JSON.stringify(o.upstream)}`);
  } catch {
    problems.push(`upstream must be a URL, got ${JSON.stringify(o.upstream)}`);
  }
  for (const name of COUNTS) {
    const v = o[name];
    if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v) || v <= 0)) problems.push(`${name} must be a positive number, got ${String(v)}`);
  }
  if (o.port !== undefined && (!Number.isInteger(o.port) || o.port < 0 || o.port > 65535)) problems.push(`port must be 0..65535, got ${String(o.port)}`);
  if (o.requestSpanDelayMs !== undefined && !(Number.isFinite(o.requestSpanDelayMs) && o.requestSpanDelayMs >= 0)) {
    problems.push(`requestSpanDelayMs must be a non-negative number, got ${String(o.requestSpanDelayMs)}`);
  }
  if (problems.length > 0 || upstreamUrl === undefined) throw createError('FORKWATCH_ERR_CONFIG_INVALID', problems.join('; '));
  return Object.freeze({
    upstream: o.upstream,
    upstreamUrl,
    host: o.host ?? DEFAULT_PROXY_HOST,
    port: o.port ?? DEFAULT_PROXY_PORT,
    guard: o.guard ?? false,
    tracerProvider: o.tracerProvider,
    salt: o.salt ?? '',
    recordRawSessionId: o.recordRawSessionId ?? false,
    guardHoldMs: o.guardHoldMs ?? DEFAULT_GUARD_HOLD_MS,
    connectTimeoutMs: o.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    headersTimeoutMs: o.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS,
    streamIdleTimeoutMs: o.streamIdleTimeoutMs ?? DEFAULT_STREAM_IDLE_TIMEOUT_MS,
    maxSessions: Math.floor(o.maxSessions ?? DEFAULT_MAX_SESSIONS),
    sessionIdleTtlMs: o.sessionIdleTtlMs ?? DEFAULT_SESSION_IDLE_TTL_MS,
    maxEventChars: Math.floor(o.maxEventChars ?? DEFAULT_MAX_EVENT_CHARS),
    maxTrackedEventIds: Math.floor(o.maxTrackedEventIds ?? DEFAULT_MAX_TRACKED_EVENT_IDS),
    maxParseBytes: Math.floor(o.maxParseBytes ?? DEFAULT_MAX_PARSE_BYTES),
    maxConnections: Math.floor(o.maxConnections ?? DEFAULT_MAX_CONNECTIONS),
    maxInitializeBytes: Math.floor(o.maxInitializeBytes ?? DEFAULT_MAX_INITIALIZE_BYTES),
    clientRequestTimeoutMs: o.clientRequestTimeoutMs ?? DEFAULT_CLIENT_REQUEST_TIMEOUT_MS,
    clientHeadersTimeoutMs: Math.min(o.clientRequestTimeoutMs ?? DEFAULT_CLIENT_REQUEST_TIMEOUT_MS, o.clientHeadersTimeoutMs ?? DEFAULT_CLIENT_HEADERS_TIMEOUT_MS),
    upstreamMaxSockets: Math.floor(o.upstreamMaxSockets ?? DEFAULT_UPSTREAM_MAX_SOCKETS),
    requestSpanDelayMs: o.requestSpanDelayMs ?? DEFAULT_REQUEST_SPAN_DELAY_MS,
  });
}
