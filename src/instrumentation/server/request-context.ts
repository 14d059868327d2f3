import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage } from 'node:http';
import type { Context } from '@opentelemetry/api';

/** What forkwatch knows of one HTTP request while it is handled. Internal. */
export interface RequestContext {
  req: IncomingMessage;
  /** The request this one was made inside (a synthetic request a handler feeds a transport). */
  parent?: RequestContext;
  method: string;
  /** Arrival order (from {@link nextLogicalTime}): what existed before the request came in. */
  arrival: number;
  sessionIdHeader?: string;
  lastEventId?: string;
  protocolVersion?: string;
  /** W3C trace context extracted from the request headers. */
  otelContext: Context;
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

/** One store for every instrumentation in the process: contexts are plain data. */
export const requestStore = new AsyncLocalStorage<RequestContext>();

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
