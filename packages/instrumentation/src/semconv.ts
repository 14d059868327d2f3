/**
 * Span, attribute and metric names of the forkwatch telemetry schema (docs/telemetry.md is
 * normative; test/semconv-doc.test.ts keeps the two in step). Both packages read them from here.
 *
 * The OpenTelemetry MCP semantic conventions moved out of open-telemetry/semantic-conventions into
 * open-telemetry/semantic-conventions-genai (`docs/gen-ai/mcp.md`, status Development), and
 * `@opentelemetry/semantic-conventions` only re-exports them as deprecated incubating constants,
 * so the names we share with them (`mcp.method.name`, `jsonrpc.request.id`, `error.type`,
 * `mcp.client.operation.duration`, ...) are copied here, as opentelemetry-js instrumentations do
 * with unstable names. docs/telemetry.md says, name by name, which are the conventions' own, which
 * are forkwatch extensions (`forkwatch.*`: event ids, resumption, incarnations, progress tokens,
 * of which the conventions say nothing) and where forkwatch departs from them and why.
 */

/** Which side of the MCP connection emitted a span (attribute `forkwatch.side`). */
export type Side = 'client' | 'server';

/** Version of this schema, carried on every span as {@link ATTR_SCHEMA_VERSION}. */
export const SCHEMA_VERSION = 1;

// ---- Span names (all start with "forkwatch." so a receiver can skip foreign spans by name) ----
export const SPAN_NAME_PREFIX = 'forkwatch.';
/** A session (incarnation) came to exist on the server. */
export const SPAN_SESSION_CREATED = 'forkwatch.session.created';
/** A session (incarnation) ended on the server: reaped, closed, evicted. */
export const SPAN_SESSION_ENDED = 'forkwatch.session.ended';
/** One SSE event: sent (server) or received (client). */
export const SPAN_SSE_EVENT = 'forkwatch.sse.event';
/** A request that carried Last-Event-ID: presented (client) or answered (server). */
export const SPAN_RESUME = 'forkwatch.resume';
/** A JSON-RPC request sent by the client. */
export const SPAN_REQUEST_SENT = 'forkwatch.request.sent';
/** A JSON-RPC request received by the server. */
export const SPAN_REQUEST_RECEIVED = 'forkwatch.request.received';
/** A client request settled: answered, errored, timed out, or failed by a guard. */
export const SPAN_REQUEST_SETTLED = 'forkwatch.request.settled';
/** A client guard raised SessionForkError. */
export const SPAN_GUARD_FORK = 'forkwatch.guard.fork';
/** Server: a request's handler finished (stateless transport: what it did and whether its stream was still open). */
export const SPAN_REQUEST_HANDLED = 'forkwatch.request.handled';

// ---- Attributes shared with the OpenTelemetry MCP / JSON-RPC / HTTP conventions ----
export const ATTR_MCP_METHOD_NAME = 'mcp.method.name';
export const ATTR_MCP_SESSION_ID = 'mcp.session.id';
export const ATTR_MCP_PROTOCOL_VERSION = 'mcp.protocol.version';
export const ATTR_JSONRPC_REQUEST_ID = 'jsonrpc.request.id';
export const ATTR_GEN_AI_TOOL_NAME = 'gen_ai.tool.name';
export const ATTR_HTTP_REQUEST_METHOD = 'http.request.method';
export const ATTR_HTTP_RESPONSE_STATUS_CODE = 'http.response.status_code';

// ---- The MCP conventions' operation spans and metrics (option `mcpSemconv`, src/conventional/) ----
export const ATTR_ERROR_TYPE = 'error.type';
export const ATTR_RPC_RESPONSE_STATUS_CODE = 'rpc.response.status_code';
/** `execute_tool` on `tools/call`, absent otherwise (the conventions' rule). */
export const ATTR_GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
export const ATTR_GEN_AI_PROMPT_NAME = 'gen_ai.prompt.name';
export const ATTR_MCP_RESOURCE_URI = 'mcp.resource.uri';
export const ATTR_NETWORK_TRANSPORT = 'network.transport';
export const ATTR_NETWORK_PROTOCOL_NAME = 'network.protocol.name';
export const ATTR_SERVER_ADDRESS = 'server.address';
export const ATTR_SERVER_PORT = 'server.port';
/** Server side: the peer address of the HTTP request that carried the message (spans only). */
export const ATTR_CLIENT_ADDRESS = 'client.address';
/** Server side: its port, when only one HTTP request of the transport was in flight (spans only). */
export const ATTR_CLIENT_PORT = 'client.port';
/** `1.1` or `2` (`network.protocol.version`): the HTTP version of the request, on the server. */
export const ATTR_NETWORK_PROTOCOL_VERSION = 'network.protocol.version';
/** Histogram, seconds: a request from sent until its response was received (client). */
export const METRIC_MCP_CLIENT_OPERATION_DURATION = 'mcp.client.operation.duration';
/** Histogram, seconds: a request from received until its response was sent (server). */
export const METRIC_MCP_SERVER_OPERATION_DURATION = 'mcp.server.operation.duration';
/** Histogram, seconds: a session from its `initialize` until the client closed its transport (client). */
export const METRIC_MCP_CLIENT_SESSION_DURATION = 'mcp.client.session.duration';
/** Histogram, seconds: a session from its `initialize` until its transport closed (server). */
export const METRIC_MCP_SERVER_SESSION_DURATION = 'mcp.server.session.duration';
/** The conventions' advised bucket boundaries (seconds) of the operation- and session-duration histograms. */
export const MCP_OPERATION_DURATION_BUCKETS: readonly number[] = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

// ---- forkwatch.* attributes ----
export const ATTR_SCHEMA_VERSION = 'forkwatch.schema.version';
/** "client" | "server" */
export const ATTR_SIDE = 'forkwatch.side';
/** hex SHA-256(salt + session id), first 32 hex chars. */
export const ATTR_SESSION_KEY = 'forkwatch.session.key';
export const ATTR_SESSION_INCARNATION = 'forkwatch.session.incarnation';
/** Where the incarnation came from: "server" (guard header/_meta) or "observed" (instrumentation-local). */
export const ATTR_SESSION_INCARNATION_SOURCE = 'forkwatch.session.incarnation.source';
/** JSON-RPC method of the request on which a session was created ("initialize" is the only sound one). */
export const ATTR_SESSION_CREATED_BY = 'forkwatch.session.created_by';
/** The created session reused an id the client supplied (rehydration). */
export const ATTR_SESSION_CLIENT_SUPPLIED_ID = 'forkwatch.session.client_supplied_id';
/** reaped_idle | closed_by_client | evicted_capacity | transport_closed | server_shutdown | error */
export const ATTR_SESSION_END_REASON = 'forkwatch.session.end_reason';
export const ATTR_SESSION_EVENTS_EVICTED = 'forkwatch.session.events_evicted';

export const ATTR_SSE_EVENT_ID = 'forkwatch.sse.event.id';
/** Sequence number of the event within its incarnation, starting at 1. */
export const ATTR_SSE_EVENT_SEQ = 'forkwatch.sse.event.seq';
/** Where the sequence number came from: "server" (guard id format), "counter" (id is a counter), "observed" (server instrumentation count). */
export const ATTR_SSE_EVENT_SEQ_SOURCE = 'forkwatch.sse.event.seq.source';
export const ATTR_SSE_STREAM_ID = 'forkwatch.sse.stream.id';
/** true when the server sent this event again in answer to a resume. */
export const ATTR_SSE_REPLAYED = 'forkwatch.sse.replayed';
/** hex SHA-256 of the event's data field, first 16 hex chars. */
export const ATTR_SSE_PAYLOAD_DIGEST = 'forkwatch.sse.payload.digest';
export const ATTR_SSE_PAYLOAD_BYTES = 'forkwatch.sse.payload.bytes';
/** request | notification | response | error | none */
export const ATTR_JSONRPC_KIND = 'forkwatch.jsonrpc.kind';
export const ATTR_PROGRESS_TOKEN = 'forkwatch.progress.token';
/** Client: delivered | dropped | no_payload. What reached the MCP SDK after every layer below it. */
export const ATTR_CLIENT_DELIVERY = 'forkwatch.client.delivery';
/** Client: this (session, event id) pair had been received before on this client. */
export const ATTR_CLIENT_SEEN_BEFORE = 'forkwatch.client.seen_before';

export const ATTR_RESUME_LAST_EVENT_ID = 'forkwatch.resume.last_event_id';
/** Server: whether Last-Event-ID was in the current incarnation's log (absent when unknown). */
export const ATTR_RESUME_LAST_EVENT_FOUND = 'forkwatch.resume.last_event_found';
/** Client: the incarnation it held before the resume. */
export const ATTR_RESUME_PREVIOUS_INCARNATION = 'forkwatch.resume.previous_incarnation';
/** Client: the session key of the id the response carried, when it differs from the one presented. */
export const ATTR_RESUME_ANSWERED_SESSION_KEY = 'forkwatch.resume.answered_session_key';
/** resumed | rejected_404 | rejected_gap | rejected_other | forked */
export const ATTR_RESUME_OUTCOME = 'forkwatch.resume.outcome';

/** answered | error | timeout | cancelled | failed_fork | failed_session_lost | transport_error | stream_broken */
export const ATTR_REQUEST_OUTCOME = 'forkwatch.request.outcome';
export const ATTR_REQUEST_DURATION_MS = 'forkwatch.request.duration_ms';
export const ATTR_REQUEST_PROGRESS_COUNT = 'forkwatch.request.progress_count';
/** Digest of the request's `params` without `_meta` (canonical JSON, SHA-256, 16 hex): what a re-issue repeats. */
export const ATTR_REQUEST_ARGS_DIGEST = 'forkwatch.request.args_digest';
/** Server, request.handled: completed | error | cancelled */
export const ATTR_REQUEST_HANDLER_OUTCOME = 'forkwatch.request.handler_outcome';
/** Server, request.handled: the response stream closed before the answer was written. */
export const ATTR_REQUEST_STREAM_CLOSED = 'forkwatch.request.stream_closed';
/** Server, request.handled: messages (notifications, requests, the answer) the handler produced for the request after its stream closed. */
export const ATTR_REQUEST_MESSAGES_AFTER_CLOSE = 'forkwatch.request.messages_after_close';

/** SessionForkError kind: session_id_changed | incarnation_changed | replay_gap | sequence_regression | session_not_found */
export const ATTR_GUARD_FORK_KIND = 'forkwatch.guard.fork_kind';
/** true on spans emitted where a forkwatch guard (server or client) is active. */
export const ATTR_GUARDED = 'forkwatch.guarded';
/** Who saw what a span records, when not the side's own code: `proxy` for `forkwatch proxy` (absent: in-process). */
export const ATTR_OBSERVER = 'forkwatch.observer';
/** {@link ATTR_OBSERVER} of spans emitted by the sidecar proxy from what crossed the wire. */
export const OBSERVER_PROXY = 'proxy';

// ---- Wire names (headers, _meta keys) ----
export const HEADER_SESSION_ID = 'mcp-session-id';
export const HEADER_LAST_EVENT_ID = 'last-event-id';
export const HEADER_PROTOCOL_VERSION = 'mcp-protocol-version';
/** Sent by a guarded server on every response of a session. */
export const HEADER_SESSION_INCARNATION = 'mcp-session-incarnation';
/** `_meta` key on InitializeResult carrying the incarnation. */
export const META_INCARNATION = 'forkwatch/incarnation';
/** `params._meta` keys carrying W3C trace context (MCP semantic conventions, SEP-414). */
export const META_TRACEPARENT = 'traceparent';
export const META_TRACESTATE = 'tracestate';
