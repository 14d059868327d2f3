/** Counters of a running proxy, cumulative since start (gauges say so). */
export interface ProxyStats {
  /** Requests received from clients. */
  requests: number;
  /** Answered 502: the upstream refused, reset or could not be reached in `connectTimeoutMs`. */
  upstreamErrors: number;
  /** Answered 504: no status line from the upstream within `headersTimeoutMs`. */
  upstreamTimeouts: number;
  /** Answer bodies closed after `streamIdleTimeoutMs` without a byte. */
  streamIdleTimeouts: number;
  /** SSE answers that ended inside an event, or events whose data was not JSON: passed through all the same. */
  malformedSse: number;
  /** SSE events over `maxEventChars`: passed through, not recorded. */
  oversizeEvents: number;
  /** Clients that went away before their answer ended (the upstream request was closed). */
  clientAborts: number;
  /** Refused with 503: `maxConnections` reached. */
  overloaded: number;
  /** Under `--guard`: answers replaced by 404, by rule. */
  guardRefusals: { resumeForked: number; answerForked: number; sessionReissued: number; sessionLost: number };
  /** Gauge: sessions tracked now. */
  sessionsTracked: number;
  /** Sessions forgotten to stay within `maxSessions` / `sessionIdleTtlMs`. */
  sessionsForgotten: number;
  /** Spans the tracer refused. */
  spanFailures: number;
}

export function newProxyStats(): ProxyStats {
  return {
    requests: 0,
    upstreamErrors: 0,
    upstreamTimeouts: 0,
    streamIdleTimeouts: 0,
    malformedSse: 0,
    oversizeEvents: 0,
    clientAborts: 0,
    overloaded: 0,
    guardRefusals: { resumeForked: 0, answerForked: 0, sessionReissued: 0, sessionLost: 0 },
    sessionsTracked: 0,
    sessionsForgotten: 0,
    spanFailures: 0,
  };
}
