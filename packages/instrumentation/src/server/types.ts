import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MeterProvider, TracerProvider } from '@opentelemetry/api';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';

/** Why a session (incarnation) ended; attribute `forkwatch.session.end_reason`. */
export type SessionEndReason =
  | 'reaped_idle'
  | 'closed_by_client'
  | 'evicted_capacity'
  | 'transport_closed'
  | 'server_shutdown'
  | 'error';

/** Options of {@link createServerInstrumentation}. */
export interface ServerInstrumentationOptions {
  /** Where spans go. Default: the global provider of `@opentelemetry/api`, looked up lazily. */
  tracerProvider?: TracerProvider;
  /** Salt of `forkwatch.session.key`. Default `process.env.FORKWATCH_SESSION_SALT ?? ''`, read at creation. */
  salt?: string;
  /** Record the raw session id as `mcp.session.id`. Default false: the id is a bearer credential. */
  recordRawSessionId?: boolean;
  /** Event ids remembered per incarnation to answer `replayed` and `last_event_found`. Default 1024. */
  maxTrackedEventIds?: number;
  /** Live sessions `markEnded(sessionId)` can find by id (oldest forgotten first). Default 10,000. */
  maxTrackedSessions?: number;
  /** Largest SSE event (chars) parsed from a response; larger ones pass through unrecorded. Default 1 MiB. */
  maxSseEventChars?: number;
  /**
   * A request answered within this many ms emits no `forkwatch.request.received` (it cannot be
   * orphaned); one still unanswered then, or when its session ends, is emitted with its arrival
   * time. `initialize` is always emitted at once. 0 emits every request, and every SSE event, at
   * once (nothing is buffered). Default 1000.
   */
  requestSpanDelayMs?: number;
  /**
   * SSE events kept per session (incarnation) until a moment emits them (docs/telemetry.md, "When
   * event history is emitted"); past it the oldest are overwritten. Default 256.
   */
  maxBufferedEventsPerSession?: number;
  /** Events kept across all sessions; past it the session whose buffer grew least recently is dropped whole. Default 65,536. */
  maxBufferedEvents?: number;
  /**
   * Payload text (chars) kept across all sessions, undigested, for buffered events: an event's
   * payload is digested and read only when a moment emits it, and dropped unread when its slot is
   * reused or its session ends cleanly. Past the budget an event is digested and read as it
   * passes and keeps no text. 0 keeps none. Default 8 MiB (8,388,608).
   */
  maxBufferedPayloadChars?: number;
  /**
   * Also emit the OpenTelemetry MCP semantic conventions (semantic-conventions-genai `mcp.md`,
   * Development): a SERVER span `{mcp.method.name} {target}` and a `mcp.server.operation.duration`
   * histogram point (seconds, the conventions' buckets) per JSON-RPC request, from its arrival until its response is sent, parented on the trace context of its `params._meta`, so forkwatch can
   * replace a peer MCP instrumentation. The raw session id appears only with `recordRawSessionId`.
   * docs/telemetry.md, "MCP semantic conventions". Default false (nothing of it is built).
   */
  mcpSemconv?: boolean;
  /** Meter provider of the `mcpSemconv` histograms. Default: the global one of `@opentelemetry/api`, looked up per point. */
  meterProvider?: MeterProvider;
  /**
   * Transports run stateless (`sessionIdGenerator: undefined`): a request repeating (method,
   * tool, argument digest) one whose response stream closed within this long emits its
   * `forkwatch.request.handled` too, ms (its re-issue). Default 30000.
   */
  reissueWindowMs?: number;
}

/** Server instrumentation: observes transports and handlers; never changes what they answer. */
export interface ServerInstrumentation {
  /**
   * Instruments one SDK transport in place (idempotent) and returns it: requests, SSE events,
   * resumes, session creation and end. Call it before the first `handleRequest`.
   */
  observeTransport<T extends StreamableHTTPServerTransport>(transport: T): T;
  /**
   * Wraps the app's Node handler (the one in front of its `transports[sessionId]` map): records
   * `forkwatch.resume` for resumes the app answers without a transport, and carries the request
   * into transports the handler creates, so `created_by` names the real request.
   */
  wrapHandler<H extends (req: IncomingMessage, res: ServerResponse, ...rest: any[]) => unknown>(handler: H): H;
  /**
   * Says why a session is about to end (e.g. `reaped_idle` from the app's reaper), before the app
   * closes its transport. Unknown ids are ignored. `eventsEvicted`: events dropped with its log.
   */
  markEnded(sessionIdOrTransport: string | StreamableHTTPServerTransport, reason: SessionEndReason, eventsEvicted?: number): void;
  /**
   * Emits now the request spans held back by `requestSpanDelayMs` (as still unanswered, stamped
   * with their arrival): call before the process exits, or let McpForkInstrumentation's
   * forceFlush/shutdown do it. Never throws.
   */
  flush(): void;
  /** Spans that could not be emitted (a throwing tracer), for health checks and tests. */
  readonly failures: number;
  /** SSE events buffered now across all sessions (at most `maxBufferedEvents`). */
  readonly bufferedEvents: number;
}

/** Options of {@link GuardedEventStore}. */
export interface GuardedEventStoreOptions {
  /** Events kept; the oldest are evicted past it. Default 1,000. */
  maxEvents?: number;
  /** Bytes (UTF-8 JSON of the messages) kept; the oldest events are evicted past it. Default 1 MiB. */
  maxBytes?: number;
}

/** Why a `Last-Event-ID` is not in a session's log. */
export type EventAbsentReason = 'event_evicted' | 'other_incarnation' | 'unknown_event';

/** Where an event id stands in a session's log. */
export type EventLookup =
  | { found: true; seq: number; streamId: string }
  | { found: false; reason: EventAbsentReason };

/** Options of {@link createSessionGuard}. */
export interface SessionGuardOptions {
  /** A fresh SDK server per session. */
  createServer: () => McpServer | Server;
  /** A session idle this long (ms, no request) is reaped with its log. Default 30 min. */
  idleTtlMs?: number;
  /** Live sessions; creating one more evicts the least recently used. Default 10,000. */
  maxSessions?: number;
  /** Events kept per session log. Default 1,000. */
  maxEventsPerSession?: number;
  /** Bytes kept per session log. Default 1 MiB. */
  maxBytesPerSession?: number;
  /** Session id generator. Default `crypto.randomUUID`. */
  sessionIdGenerator?: () => string;
  /** Observes the guard's transports and rejections. Default none. */
  instrumentation?: ServerInstrumentation;
  /** Passed to the SDK transport: answer POSTs with JSON instead of SSE. Default false. */
  enableJsonResponse?: boolean;
  /** Largest POST body (bytes) the guard reads to recognise `initialize`. Default 4 MiB (the SDK's). */
  maxBodyBytes?: number;
  /** Clock, ms. Default `Date.now`. */
  now?: () => number;
  /** Period of the idle reaper (ms); 0 disables the timer (call `reap()`). Default min(idleTtlMs, 60 s). */
  reapIntervalMs?: number;
}

/** Counters of a {@link SessionGuard}, for tests and health checks. */
export interface SessionGuardStats {
  sessions: number;
  /** Events held across all session logs. */
  events: number;
  created: number;
  reapedIdle: number;
  evictedCapacity: number;
  closed: number;
  rejectedUnknownSession: number;
  rejectedEventAbsent: number;
}

/** A drop-in replacement for the `transports[sessionId]` map: sessions and logs live and die together. */
export interface SessionGuard {
  /** Routes one HTTP request (POST, GET, DELETE) of the MCP endpoint. Never rejects. */
  handleRequest(req: IncomingMessage, res: ServerResponse, parsedBody?: unknown): Promise<void>;
  /** Reaps idle sessions now; returns how many. */
  reap(): number;
  /** Stops the reaper and closes every session (reason `server_shutdown`). */
  close(): Promise<void>;
  stats(): SessionGuardStats;
  /** The incarnation of a live session, or undefined. */
  incarnationOf(sessionId: string): string | undefined;
}
