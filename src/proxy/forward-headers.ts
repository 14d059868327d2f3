import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';

/** Hop-by-hop headers (RFC 9110 7.6.1): they describe one connection and are not forwarded. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'proxy-authorization', 'proxy-authenticate']);

/**
 * The headers to forward: all but the hop-by-hop ones and those the `Connection` header names.
 * `host` is replaced by `hostOverride` when given (the upstream's, for virtual hosting).
 */
export function forwardHeaders(headers: IncomingHttpHeaders, hostOverride?: string): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  const named = headers.connection;
  const extra = typeof named === 'string' && named !== 'keep-alive' && named !== 'close' ? new Set(named.toLowerCase().split(',').map((x) => x.trim())) : undefined;
  for (const k in headers) {
    if (HOP_BY_HOP.has(k) || extra?.has(k)) continue;
    out[k] = headers[k];
  }
  if (hostOverride !== undefined) out.host = hostOverride;
  return out;
}

/** First value of a request header as a string. */
export function headerOf(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}
