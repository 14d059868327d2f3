import type { MeterProvider, TracerProvider } from '@opentelemetry/api';
import type { ClientOptions } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransportOptions } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Implementation } from '@modelcontextprotocol/sdk/types.js';
import type { ClientGuard } from './client-guard.js';
import type { ClientInstrumentation } from './client-instrumentation.js';
import type { SessionForkError } from './session-fork-error.js';

/** The fetch signature the MCP SDK's StreamableHTTPClientTransport accepts as `opts.fetch`. */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** The reason a guard refused to go on with a session. */
export type SessionForkKind =
  | 'session_id_changed'
  | 'incarnation_changed'
  | 'replay_gap'
  | 'sequence_regression'
  | 'session_not_found';

/** Options shared by the client instrumentation and the client guard. */
export interface ClientCommonOptions {
  /** Tracer provider for forkwatch spans. Default: the global one from @opentelemetry/api. */
  tracerProvider?: TracerProvider;
  /** Salt of `forkwatch.session.key`. Default: `process.env.FORKWATCH_SESSION_SALT ?? ''`, read at creation. */
  salt?: string;
  /** Record the raw session id as `mcp.session.id`. Default false: it is a bearer credential. */
  recordRawSessionId?: boolean;
  /** Sessions whose state (incarnation, seen event ids, cursors) is kept, least recently used evicted. Default 1024. */
  maxSessions?: number;
  /** Session ids longer than this (chars) are replaced by a digest before keying: a hostile header must not pin memory. Default 1024. */
  maxSessionIdChars?: number;
  /** Largest SSE event (chars) inspected; larger ones pass through uninspected. Default 1 MiB. */
  maxEventChars?: number;
}

/** Options of {@link createClientInstrumentation}. */
export interface ClientInstrumentationOptions extends ClientCommonOptions {
  /** Event ids remembered per session for `forkwatch.client.seen_before`. Default 4096. */
  maxSeenEventsPerSession?: number;
  /** A wire event not delivered to the SDK within this many ms is reported `dropped`. Default 2000. */
  deliveryTimeoutMs?: number;
  /** Wire events awaiting a delivery decision, per connection; past it the oldest is decided `dropped`. Default 1024. */
  maxPendingEvents?: number;
  /** Requests awaiting settlement tracked per client. Default 4096. */
  maxPendingRequests?: number;
  /**
   * With `attach(transport, client)`: a request answered (result or JSON-RPC error) within this
   * many ms emits no spans (it cannot be orphaned); one still waiting then emits
   * `forkwatch.request.sent` stamped with its send time, and `request.settled` when it settles.
   * `initialize`, and any request that ends without an answer, is always recorded. 0 records
   * every request, and every SSE event, at once (nothing is buffered). Default 1000.
   */
  requestSpanDelayMs?: number;
  /**
   * SSE events kept per session until a moment emits them (docs/telemetry.md, "When event history
   * is emitted"); past it the oldest are overwritten. Default 256.
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
  /** Largest POST body / JSON response (chars) parsed for JSON-RPC ids. Default 1 MiB. */
  maxParseChars?: number;
  /**
   * Stream names kept per session to name a resumed GET stream after the stream its
   * `Last-Event-ID` came on (the event ids themselves are the `maxSeenEventsPerSession` ones).
   * Default 256.
   */
  maxStreamIndex?: number;
  /** Mark spans `forkwatch.guarded` (a ClientGuard sits above this instrumentation). Default false. */
  guarded?: boolean;
  /** Inject W3C `traceparent` into outgoing requests that have none. Default true. */
  injectTraceContext?: boolean;
  /**
   * Also emit the OpenTelemetry MCP semantic conventions (semantic-conventions-genai `mcp.md`,
   * Development): a CLIENT span `{mcp.method.name} {target}` and a `mcp.client.operation.duration`
   * histogram point (seconds, the conventions' buckets) per JSON-RPC request, from `client.request()` until it settles (needs `attach(transport, client)`), its context written into `params._meta` as `traceparent`/`tracestate`, so forkwatch can
   * replace a peer MCP instrumentation. The raw session id appears only with `recordRawSessionId`.
   * docs/telemetry.md, "MCP semantic conventions". Default false (nothing of it is built).
   */
  mcpSemconv?: boolean;
  /** Meter provider of the `mcpSemconv` histograms. Default: the global one of `@opentelemetry/api`, looked up per point. */
  meterProvider?: MeterProvider;
}

/** Structural view of the SDK's StreamableHTTPClientTransport that attach() relies on. */
export interface AttachableTransport {
  onmessage?: ((message: any, extra?: any) => void) | undefined;
  readonly sessionId?: string | undefined;
}

/** Structural view of the SDK's Client (Protocol) that attach() relies on. */
export interface AttachableClient {
  request: (...args: any[]) => Promise<any>;
}

/** Counters of what the instrumentation could not do; it never throws instead. */
export interface ClientInstrumentationStats {
  /** Hooks that failed and were skipped. */
  hookFailures: number;
  /** Spans the tracer refused. */
  spanFailures: number;
  /** SSE events skipped as oversized. */
  oversizedEvents: number;
  /** SSE events buffered now across all sessions (at most `maxBufferedEvents`). */
  bufferedEvents: number;
}

/** Options of {@link createClientGuard}. */
export interface ClientGuardOptions extends ClientCommonOptions {
  /** `(session, incarnation, event id)` keys remembered for dedup, per session. Default 4096. */
  maxSeenEventsPerSession?: number;
  /** Streams whose last sequence is remembered, per session. Default 256. */
  maxStreamsPerSession?: number;
}

/** Called when a guard detects a fork; listeners never break the guard (errors are swallowed). */
export type ForkListener = (error: SessionForkError) => void;

/** Options of {@link connectGuarded}. */
export interface ConnectGuardedOptions {
  url: string | URL;
  clientInfo: Implementation;
  capabilities?: ClientOptions['capabilities'];
  /** Passed to each new StreamableHTTPClientTransport; its `fetch` becomes the innermost fetch. */
  transportOptions?: StreamableHTTPClientTransportOptions;
  /** Instrumentation placed under the guard (sees the wire). Default: none. */
  instrumentation?: ClientInstrumentation;
  /** Guard to use. Default: a new guard from `guardOptions`. */
  guard?: ClientGuard;
  guardOptions?: ClientGuardOptions;
  /** Default per-request timeout for callTool, ms. Default: the SDK's (60000). */
  requestTimeoutMs?: number;
}
