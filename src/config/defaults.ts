/**
 * Every setting of the detector service, with its default. Flags (`--otlp-port`) override
 * environment variables (`FORKWATCH_OTLP_PORT`) override these. docs/configuration.md lists them.
 */
export const DEFAULT_CONFIG = {
  /** Interface both listeners bind. */
  host: '0.0.0.0',
  /** OTLP/HTTP receiver port (POST /v1/traces); 0 = ephemeral. */
  otlpPort: 4318,
  /** OTLP/gRPC receiver port (TraceService/Export, what the Collector's load_balancing exporter speaks); 0 = ephemeral. */
  otlpGrpcPort: 4317,
  /** API, /metrics, /healthz, /readyz port; 0 = ephemeral. */
  httpPort: 9464,
  /** SQLite file, or ':memory:' (nothing survives a restart). */
  db: './forkwatch.db',
  /** When set, OTLP and API requests need `Authorization: Bearer <token>`. */
  authToken: '',
  /** Also require the token on /metrics, /healthz and /readyz. */
  metricsAuth: false,
  /** Wrong tokens one client address may present per minute on the API port (bearer or sign-in form) before 429; 0 = off. */
  authFailuresPerMinute: 20,
  /** Mark the incident view's sign-in cookie `Secure` (set it when browsers reach the detector over TLS). */
  uiCookieSecure: false,
  /** How long an incident-view sign-in lasts, ms (the cookie's Max-Age; the sign-in table forgets it then). */
  uiSessionTtlMs: 12 * 3_600_000,
  /** Incident-view sign-ins held at once; past it the oldest is signed out. */
  uiMaxSessions: 1000,
  /** error | warn | info | debug */
  logLevel: 'info',

  /** Largest OTLP request body accepted as sent, bytes (413 above). */
  maxBodyBytes: 4 * 1024 * 1024,
  /** Largest OTLP body after gzip inflation, bytes (413 above). */
  maxDecompressedBytes: 16 * 1024 * 1024,
  /** Spans accepted but not yet committed; past this OTLP requests get 503 + Retry-After. */
  maxQueuedSpans: 200_000,
  /**
   * OTLP bytes in flight across receivers, bytes: bodies being read (as announced, or as they
   * arrive when chunked), inflated, and decoded batches waiting for their commit. Past it a
   * request is answered 429 + Retry-After before its body is read.
   */
  maxInFlightBytes: 64 * 1024 * 1024,
  /** Longest time to receive a whole HTTP request (headers and body) on either HTTP port, or a gRPC call's message, ms; then 408 (gRPC DEADLINE_EXCEEDED) and close. */
  requestTimeoutMs: 30_000,
  /** Longest time to receive an HTTP request's headers on either port, ms (at most requestTimeoutMs). */
  headersTimeoutMs: 10_000,
  /** Open connections per port (HTTP and gRPC); further ones are closed on accept. */
  maxConnections: 1024,
  /** OTLP/gRPC: a connection with no call open for this long gets GOAWAY and is closed, ms (PINGs do not keep it open). */
  grpcIdleTimeoutMs: 60_000,
  /** OTLP/gRPC: calls open at once on one connection (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS). */
  grpcMaxConcurrentStreams: 100,
  /** Retry-After sent with 503/429, seconds. */
  retryAfterSeconds: 2,

  /** How long the correlator waits after a session's first undecided evidence before deciding, ms; a session end, a resume or a guard's refusal restarts it (the other side's spans of that moment come later). */
  decisionWindowMs: 10_000,
  /** Sessions tracked at once; the least recently updated is dropped (and counted) past this. */
  maxSessions: 100_000,
  /** SSE events held across all sessions (memory: ~0.5-0.7 KB of RSS each); the least recently updated sessions are dropped (and counted) past this. Sized so that the defaults fit 1 GiB under overload (docs/configuration.md). */
  maxTrackedEvents: 750_000,
  /** Events remembered per incarnation, oldest dropped (and counted) first. */
  maxEventsPerIncarnation: 256,
  /** Pending requests remembered per session. */
  maxRequestsPerSession: 256,
  /** A session with no span for this long is expired (counted), ms. */
  sessionTtlMs: 15 * 60_000,
  /** An idle, decided session is compacted to a summary after this long, ms. */
  compactAfterMs: 60_000,
  /** Events in a session's lineage, and in the lineage kept with its findings after compaction or expiry (ordinary events cut first, oldest first). */
  maxKeptEvents: 200,
  /** Stateless transport: a call with the same method, tool and argument digest sent within this long after a call's stream broke is its re-issue; a broken call not re-issued within it is orphaned, ms. */
  reissueWindowMs: 30_000,
  /** Stateless transport: calls tracked at once; the least recently updated is forgotten past this. */
  maxStatelessCalls: 100_000,
  /** How often pending decisions and expiry are evaluated, ms. */
  tickIntervalMs: 500,
  /** Group-commit interval of the SQLite writer, ms; OTLP requests are acknowledged after their commit. */
  commitIntervalMs: 20,
  /** Findings and session state older than this are deleted, ms (default 30 days). */
  retentionMs: 30 * 24 * 3_600_000,
  /** Distinct `service` label values kept on metrics; later services are labelled `other`. */
  maxServices: 50,
  /**
   * Other replicas' API base URLs, comma-separated (`http://detector-2:9464,...`): the findings and
   * session routes fan out to them and merge. Empty: this replica answers alone.
   */
  peers: '',
  /** How long a fan-out waits for one peer before naming it as not answering, ms. */
  peerTimeoutMs: 2_000,
  /** SIGTERM: longest wait for in-flight batches before exiting anyway, ms. */
  drainTimeoutMs: 10_000,
};

export type DetectorConfig = typeof DEFAULT_CONFIG;
export type ConfigKey = keyof DetectorConfig;

/** Environment variables read besides FORKWATCH_<KEY>: these belong to the instrumentation. */
export const FOREIGN_FORKWATCH_ENV = new Set(['FORKWATCH_SESSION_SALT', 'FORKWATCH_RECORD_RAW_SESSION_ID', 'FORKWATCH_MCP_SEMCONV', 'FORKWATCH_REQUEST_SPAN_DELAY_MS', 'FORKWATCH_ALLOW_UNTESTED_MCP_SDK']);

/** Bounds checked at start; a value outside is a configuration error. */
export const CONFIG_BOUNDS: Partial<Record<ConfigKey, { min: number; max: number; integer?: boolean }>> = {
  otlpPort: { min: 0, max: 65535, integer: true },
  otlpGrpcPort: { min: 0, max: 65535, integer: true },
  httpPort: { min: 0, max: 65535, integer: true },
  authFailuresPerMinute: { min: 0, max: 1_000_000, integer: true },
  uiSessionTtlMs: { min: 60_000, max: 30 * 24 * 3_600_000 },
  uiMaxSessions: { min: 1, max: 1_000_000, integer: true },
  maxBodyBytes: { min: 1024, max: 1024 ** 3, integer: true },
  maxDecompressedBytes: { min: 1024, max: 4 * 1024 ** 3, integer: true },
  maxQueuedSpans: { min: 1, max: 100_000_000, integer: true },
  requestTimeoutMs: { min: 100, max: 3_600_000 },
  headersTimeoutMs: { min: 100, max: 3_600_000 },
  maxConnections: { min: 1, max: 1_000_000, integer: true },
  grpcIdleTimeoutMs: { min: 100, max: 24 * 3_600_000 },
  grpcMaxConcurrentStreams: { min: 1, max: 10_000, integer: true },
  maxInFlightBytes: { min: 1024 * 1024, max: 64 * 1024 ** 3, integer: true },
  retryAfterSeconds: { min: 1, max: 3600, integer: true },
  decisionWindowMs: { min: 0, max: 3_600_000 },
  maxSessions: { min: 1, max: 100_000_000, integer: true },
  maxTrackedEvents: { min: 1, max: 1_000_000_000, integer: true },
  maxEventsPerIncarnation: { min: 1, max: 1_000_000, integer: true },
  maxRequestsPerSession: { min: 1, max: 1_000_000, integer: true },
  sessionTtlMs: { min: 1000, max: 30 * 24 * 3_600_000 },
  compactAfterMs: { min: 0, max: 30 * 24 * 3_600_000 },
  maxKeptEvents: { min: 1, max: 100_000, integer: true },
  reissueWindowMs: { min: 0, max: 3_600_000 },
  maxStatelessCalls: { min: 1, max: 100_000_000, integer: true },
  tickIntervalMs: { min: 10, max: 60_000 },
  commitIntervalMs: { min: 0, max: 10_000 },
  retentionMs: { min: 60_000, max: 10 * 365 * 24 * 3_600_000 },
  maxServices: { min: 1, max: 10_000, integer: true },
  peerTimeoutMs: { min: 50, max: 60_000 },
  drainTimeoutMs: { min: 0, max: 600_000 },
};

export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;
