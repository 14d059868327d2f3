/** The sidecar proxy: `forkwatch proxy --upstream URL` (docs/proxy.md). */
export { createForkwatchProxy } from './proxy-server.js';
export type { ForkwatchProxy } from './proxy-server.js';
export {
  DEFAULT_CLIENT_HEADERS_TIMEOUT_MS,
  DEFAULT_CLIENT_REQUEST_TIMEOUT_MS,
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_GUARD_HOLD_MS,
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_MAX_INITIALIZE_BYTES,
  DEFAULT_MAX_PARSE_BYTES,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_PROXY_HOST,
  DEFAULT_PROXY_PORT,
  DEFAULT_SESSION_IDLE_TTL_MS,
  DEFAULT_STREAM_IDLE_TIMEOUT_MS,
  DEFAULT_UPSTREAM_MAX_SOCKETS,
  resolveProxyOptions,
} from './proxy-options.js';
export type { ProxyOptions, ResolvedProxyOptions } from './proxy-options.js';
export type { ProxyStats } from './proxy-stats.js';
export { JSONRPC_UPSTREAM_ERROR } from './proxy-context.js';
