/** Tunables of the correlation engine. Every limit has a default in {@link DEFAULT_ENGINE_OPTIONS}. */
export interface EngineOptions {
  /** Wait this long (ms) after a session's first undecided evidence before deciding, so that the other side's spans can arrive. Default 10000. */
  decisionWindowMs: number;
  /** Sessions tracked at once; past it the least recently updated is evicted (drop `session_capacity`). Default 100000. */
  maxSessions: number;
  /**
   * SSE event spans held across all sessions; past it the least recently updated sessions are
   * evicted whole (drop `event_capacity`) until it holds again. Bounds memory where `maxSessions`
   * bounds only the count (each event ~0.5-0.7 KB of RSS). Default 750000: with the other defaults the
   * detector then fits a 1 GiB container under overload (docs/configuration.md, "Memory under overload").
   */
  maxTrackedEvents: number;
  /** SSE event spans kept per incarnation and side; the oldest go first (drop `events_per_session`). Default 256. */
  maxEventsPerIncarnation: number;
  /** Requests kept per session; the oldest go first (drop `requests_per_session`). Default 256. */
  maxRequestsPerSession: number;
  /** Incarnations kept per session; events of older ones go first. Default 16. */
  maxIncarnationsPerSession: number;
  /** Resume spans kept per session; the oldest go first. Default 64. */
  maxResumesPerSession: number;
  /** A session idle this long (ms, detector clock) is expired (drop `session_expired`). Default 900000 (15 min). */
  sessionTtlMs: number;
  /** A decided session idle this long (ms) is compacted to a small summary. Default 60000. */
  compactAfterMs: number;
  /**
   * Events in a session's lineage (the API's and the incident view's) and in the lineage kept
   * with its findings once it is compacted or dropped; see boundLineage for what is cut first.
   * Default 200.
   */
  maxKeptEvents: number;
  /** Stateless transport: ms after a call's stream broke (client clock; server clock without client spans) within which a call with the same method, tool and argument digest is its re-issue. Default 30000. */
  reissueWindowMs: number;
  /** Stateless transport: calls tracked at once; past it the least recently updated is forgotten. Default 100000. */
  maxStatelessCalls: number;
}

/** Defaults of {@link EngineOptions}; the lead's config layer validates overrides. */
export const DEFAULT_ENGINE_OPTIONS: Readonly<EngineOptions> = Object.freeze({
  decisionWindowMs: 10_000,
  maxSessions: 100_000,
  maxTrackedEvents: 750_000,
  maxEventsPerIncarnation: 256,
  maxRequestsPerSession: 256,
  maxIncarnationsPerSession: 16,
  maxResumesPerSession: 64,
  sessionTtlMs: 900_000,
  compactAfterMs: 60_000,
  maxKeptEvents: 200,
  reissueWindowMs: 30_000,
  maxStatelessCalls: 100_000,
});
