import type { RequestFact, SpanFact } from '../session-state.js';

/**
 * Total order of facts of one side: time, then event sequence (clients stamp whole milliseconds,
 * so several events of a burst share a time), then trace and span id. Arrival order never
 * decides: the same spans in any batches give the same walk, hence the same findings.
 */
export function byTime(a: SpanFact, b: SpanFact): number {
  const d = a.timeMs - b.timeMs;
  if (d !== 0 && !Number.isNaN(d)) return d;
  const sa = (a as { seq?: number }).seq;
  const sb = (b as { seq?: number }).seq;
  if (sa !== undefined && sb !== undefined && sa !== sb) return sa - sb;
  if (sa !== undefined && sb === undefined) return -1;
  if (sa === undefined && sb !== undefined) return 1;
  return stableKeyOrder(a, b);
}

function stableKeyOrder(a: SpanFact, b: SpanFact): number {
  if (a.traceId !== b.traceId) return a.traceId < b.traceId ? -1 : 1;
  if (a.spanId !== b.spanId) return a.spanId < b.spanId ? -1 : 1;
  return 0;
}

/**
 * In-place order by {@link byTime}, skipping the sort when already in order (the common case:
 * spans of one side mostly arrive in the order they started).
 */
export function sortByTime<T extends SpanFact>(xs: T[]): T[] {
  for (let i = 1; i < xs.length; i++) if (!(byTime(xs[i - 1]!, xs[i]!) <= 0)) return xs.sort(byTime);
  return xs;
}

/** Requests by client send time, then request id (ids are unique within a session). */
export function bySentTime(a: RequestFact, b: RequestFact): number {
  const d = a.sent!.timeMs - b.sent!.timeMs;
  if (d !== 0 && !Number.isNaN(d)) return d;
  return a.requestId < b.requestId ? -1 : a.requestId > b.requestId ? 1 : 0;
}

/** Requests in a stable order whatever the map's insertion (arrival) order. */
export function byRequestId(a: RequestFact, b: RequestFact): number {
  return a.requestId < b.requestId ? -1 : a.requestId > b.requestId ? 1 : 0;
}
