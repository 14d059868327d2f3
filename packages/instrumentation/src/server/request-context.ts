import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { context, propagation, type Context } from '@opentelemetry/api';

/**
 * What forkwatch knows of one HTTP request while it is handled. Internal.
 *
 * It must never reference the request or its response: it is the value of a WeakMap keyed by the
 * request ({@link requestContexts}), and V8's minor GC keeps WeakMap values alive, so a value
 * reaching its key kept every request (socket, parser, response) alive until a major GC,
 * promoting it to the old generation: ~10 KB a request, and the largest cost of the server
 * instrumentation.
 */
export interface RequestContext {
  /** The request's headers (what its trace context is read from), not the request. */
  headers: IncomingHttpHeaders;
  /**
   * The request this one was made inside: a synthetic request a handler feeds a transport while
   * serving a real one. Learnt when the transport creates its session (see `presenting`).
   */
  parent?: RequestContext;
  /** Made by `wrapHandler` (a real request of the app's endpoint), not by a transport. */
  wrapped: boolean;
  method: string;
  /** Arrival order (from {@link nextLogicalTime}): what existed before the request came in. */
  arrival: number;
  sessionIdHeader?: string;
  lastEventId?: string;
  protocolVersion?: string;
  /** W3C trace context of the request headers; extracted on first use by {@link otelContextOf}. */
  otelContext?: Context;
  /** JSON-RPC method of the first message of a POST body, once known. */
  rpcMethod?: string;
  /** An observed transport serves this request (it records the resume itself). */
  claimed: boolean;
  resumeEmitted: boolean;
  /** Set by a session guard answering the request itself. */
  guard?: { incarnation?: string; lastEventFound?: boolean };
}

let ticks = 0;

/**
 * A process-wide logical clock ordering request arrivals and session creations, so an
 * instrumentation can tell that a session was born while a request was already in flight.
 */
export function nextLogicalTime(): number {
  return ++ticks;
}

/**
 * The context of each request an instrumentation has seen, keyed by the request object itself: a
 * transport's `handleRequest(req)` finds the one `wrapHandler` made, and a session guard marks it.
 * A WeakMap rather than AsyncLocalStorage, whose promise hooks would tax every promise of the
 * host process (Node 20) once entered. One map for every instrumentation: contexts are plain data.
 */
export const requestContexts = new WeakMap<IncomingMessage, RequestContext>();

/** The context forkwatch keeps for `req`, if any. */
export function contextOf(req: IncomingMessage): RequestContext | undefined {
  return requestContexts.get(req);
}

/** Trace context of the request's headers, extracted once and only when a span needs it. */
export function otelContextOf(ctx: RequestContext): Context {
  if (ctx.otelContext === undefined) {
    let c = context.active();
    try {
      c = propagation.extract(c, ctx.headers);
    } catch {
      // A broken propagator only costs the trace link.
    }
    ctx.otelContext = c;
  }
  return ctx.otelContext;
}

/** The outermost request of a (possibly nested) context. */
export function rootOf(ctx: RequestContext): RequestContext {
  let c = ctx;
  while (c.parent) c = c.parent;
  return c;
}

/** First value of a header, or undefined. */
export function headerValue(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  if (Array.isArray(v)) return v[0];
  return v === undefined || v === '' ? undefined : v;
}
