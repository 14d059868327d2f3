import { describeText, type JsonRpcInfo } from '@forkwatch/instrumentation/wire';
import { requestHeaders, requestMethod, type FetchLike } from './fetch-types.js';
import { rewriteSseResponse } from './sse-rewrite.js';

/** One HTTP exchange as the client's network layer saw it. */
export interface TappedExchange {
  method: string;
  /** Session id the request presented. */
  sessionId?: string;
  /** Session id the response carried. */
  answeredSessionId?: string;
  lastEventId?: string;
  status: number;
  incarnation?: string;
  at: number;
}

/** One id-bearing SSE event as it arrived off the wire (before any app layer). */
export interface TappedEvent {
  sessionId?: string;
  eventId: string;
  info: JsonRpcInfo;
  /** The exchange (index into `exchanges`) whose body carried it. */
  exchange: number;
  at: number;
}

export interface WireTapOptions {
  onExchange?: (x: TappedExchange, index: number) => void;
  onEvent?: (e: TappedEvent) => void;
  /** Records kept of each kind before the oldest are dropped. Default 10 000. */
  maxRecords?: number;
}

export interface WireTap {
  fetch: FetchLike;
  exchanges: TappedExchange[];
  events: TappedEvent[];
  /** Requests sent and not yet answered with headers (a `notifications/cancelled` POST in flight, say). */
  inflight: number;
}

/**
 * A fetch wrapper the demo puts right above the network: it records every exchange and every
 * id-bearing SSE event, passing bytes through unchanged, so a scenario can act on what is on the
 * wire (partition after the 7th event, notice the resume) and report what really arrived.
 */
export function wireTap(inner: FetchLike, opts: WireTapOptions = {}): WireTap {
  const max = opts.maxRecords ?? 10_000;
  const tap: WireTap = {
    exchanges: [],
    events: [],
    inflight: 0,
    fetch: async (input, init) => {
      const h = requestHeaders(input, init);
      tap.inflight++;
      let res: Response;
      try {
        res = await inner(input, init);
      } finally {
        tap.inflight--;
      }
      const x: TappedExchange = {
        method: requestMethod(input, init),
        sessionId: h.get('mcp-session-id') ?? undefined,
        answeredSessionId: res.headers.get('mcp-session-id') ?? undefined,
        lastEventId: h.get('last-event-id') ?? undefined,
        status: res.status,
        incarnation: res.headers.get('mcp-session-incarnation') ?? undefined,
        at: Date.now(),
      };
      if (tap.exchanges.length < max) tap.exchanges.push(x);
      const index = tap.exchanges.length - 1;
      try {
        opts.onExchange?.(x, index);
      } catch {
        // an observer must not break the exchange
      }
      return rewriteSseResponse(res, (ev) => {
        if (ev.id === undefined) return true;
        const e: TappedEvent = {
          sessionId: x.answeredSessionId ?? x.sessionId,
          eventId: ev.id,
          info: describeText(ev.data)[0] ?? { kind: 'none' },
          exchange: index,
          at: Date.now(),
        };
        if (tap.events.length < max) tap.events.push(e);
        opts.onEvent?.(e);
        return true;
      });
    },
  };
  return tap;
}
