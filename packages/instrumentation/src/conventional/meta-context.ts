import { propagation, trace, type Context, type Link, type TextMapGetter } from '@opentelemetry/api';

/**
 * Reads a carrier that is either a plain header object (SDK 1.x `requestInfo.headers`, a
 * `params._meta` bag) or a Fetch `Headers` (SDK 2.x `extra.request.headers`).
 */
const getter: TextMapGetter<unknown> = {
  keys(carrier) {
    if (carrier instanceof Headers) return [...carrier.keys()];
    return carrier !== null && typeof carrier === 'object' ? Object.keys(carrier) : [];
  },
  get(carrier, key) {
    if (carrier instanceof Headers) return carrier.get(key) ?? undefined;
    if (carrier === null || typeof carrier !== 'object') return undefined;
    const v = (carrier as Record<string, unknown>)[key];
    if (typeof v === 'string') return v;
    return Array.isArray(v) && typeof v[0] === 'string' ? (v[0] as string) : undefined;
  },
};

/**
 * The request with the W3C trace context of `ctx` written into `params._meta` (the MCP
 * conventions and SEP-414: unprefixed `traceparent`, `tracestate`, `baggage`). A copy: the
 * caller's object is never changed. A `_meta` that already names a traceparent is the app's own
 * and is left as it is, as is a request the propagator writes nothing for.
 */
export function withTraceMeta<R>(request: R, ctx: Context): R {
  const req = request as { params?: unknown };
  const params = req.params !== null && typeof req.params === 'object' && !Array.isArray(req.params) ? (req.params as Record<string, unknown>) : undefined;
  if (req.params !== undefined && params === undefined) return request;
  const meta = params?._meta !== null && typeof params?._meta === 'object' ? (params._meta as Record<string, unknown>) : undefined;
  if (meta !== undefined && 'traceparent' in meta) return request;
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  if (carrier.traceparent === undefined) return request;
  return { ...request, params: { ...params, _meta: { ...meta, ...carrier } } } as R;
}

/**
 * The parent of a server operation span and its link: the context in `params._meta` when the
 * client sent one (the MCP client span), linked to the HTTP request's context (the transport's,
 * the conventions' "ambient" context); without one, the HTTP request's context itself.
 */
export function serverParent(base: Context, params: unknown, headers: unknown): { parent: Context; links: Link[] } {
  const meta = params !== null && typeof params === 'object' ? (params as { _meta?: unknown })._meta : undefined;
  const http = headers !== undefined ? propagation.extract(base, headers, getter) : base;
  if (meta !== null && typeof meta === 'object' && typeof (meta as { traceparent?: unknown }).traceparent === 'string') {
    const fromMeta = propagation.extract(base, meta, getter);
    if (trace.getSpanContext(fromMeta) !== undefined) {
      const httpSpan = trace.getSpanContext(http);
      const metaSpan = trace.getSpanContext(fromMeta);
      const links = httpSpan && trace.isSpanContextValid(httpSpan) && httpSpan.spanId !== metaSpan?.spanId ? [{ context: httpSpan }] : [];
      return { parent: fromMeta, links };
    }
  }
  return { parent: http, links: [] };
}

/** Request headers of a transport's `onmessage` extra: 1.x `requestInfo.headers`, 2.x `request.headers`. */
export function headersOfExtra(extra: unknown): unknown {
  if (extra === null || typeof extra !== 'object') return undefined;
  const e = extra as { requestInfo?: { headers?: unknown }; request?: { headers?: unknown } };
  return e.requestInfo?.headers ?? e.request?.headers;
}

/** First value of header `name` in either carrier shape. */
export function headerOf(headers: unknown, name: string): string | undefined {
  return getter.get(headers, name) as string | undefined;
}
