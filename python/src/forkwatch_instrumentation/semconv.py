"""Span and attribute names of the forkwatch telemetry schema (docs/telemetry.md is normative).

The same names as packages/instrumentation/src/semconv.ts; the conformance tests hold both to the doc.
"""

from __future__ import annotations

from typing import Final, Literal

Side = Literal["client", "server"]

SCHEMA_VERSION: Final = 1

SPAN_SESSION_CREATED: Final = "forkwatch.session.created"
SPAN_SESSION_ENDED: Final = "forkwatch.session.ended"
SPAN_SSE_EVENT: Final = "forkwatch.sse.event"
SPAN_RESUME: Final = "forkwatch.resume"
SPAN_REQUEST_SENT: Final = "forkwatch.request.sent"
SPAN_REQUEST_RECEIVED: Final = "forkwatch.request.received"
SPAN_REQUEST_SETTLED: Final = "forkwatch.request.settled"
SPAN_GUARD_FORK: Final = "forkwatch.guard.fork"

ATTR_MCP_METHOD_NAME: Final = "mcp.method.name"
ATTR_MCP_SESSION_ID: Final = "mcp.session.id"
ATTR_MCP_PROTOCOL_VERSION: Final = "mcp.protocol.version"
ATTR_JSONRPC_REQUEST_ID: Final = "jsonrpc.request.id"
ATTR_GEN_AI_TOOL_NAME: Final = "gen_ai.tool.name"
ATTR_HTTP_REQUEST_METHOD: Final = "http.request.method"
ATTR_HTTP_RESPONSE_STATUS_CODE: Final = "http.response.status_code"

ATTR_SCHEMA_VERSION: Final = "forkwatch.schema.version"
ATTR_SIDE: Final = "forkwatch.side"
ATTR_SESSION_KEY: Final = "forkwatch.session.key"
ATTR_SESSION_INCARNATION: Final = "forkwatch.session.incarnation"
ATTR_SESSION_INCARNATION_SOURCE: Final = "forkwatch.session.incarnation.source"
ATTR_SESSION_CREATED_BY: Final = "forkwatch.session.created_by"
ATTR_SESSION_CLIENT_SUPPLIED_ID: Final = "forkwatch.session.client_supplied_id"
ATTR_SESSION_END_REASON: Final = "forkwatch.session.end_reason"
ATTR_SESSION_EVENTS_EVICTED: Final = "forkwatch.session.events_evicted"
ATTR_SSE_EVENT_ID: Final = "forkwatch.sse.event.id"
ATTR_SSE_EVENT_SEQ: Final = "forkwatch.sse.event.seq"
ATTR_SSE_EVENT_SEQ_SOURCE: Final = "forkwatch.sse.event.seq.source"
ATTR_SSE_STREAM_ID: Final = "forkwatch.sse.stream.id"
ATTR_SSE_REPLAYED: Final = "forkwatch.sse.replayed"
ATTR_SSE_PAYLOAD_DIGEST: Final = "forkwatch.sse.payload.digest"
ATTR_SSE_PAYLOAD_BYTES: Final = "forkwatch.sse.payload.bytes"
ATTR_JSONRPC_KIND: Final = "forkwatch.jsonrpc.kind"
ATTR_PROGRESS_TOKEN: Final = "forkwatch.progress.token"
ATTR_CLIENT_DELIVERY: Final = "forkwatch.client.delivery"
ATTR_CLIENT_SEEN_BEFORE: Final = "forkwatch.client.seen_before"
ATTR_RESUME_LAST_EVENT_ID: Final = "forkwatch.resume.last_event_id"
ATTR_RESUME_LAST_EVENT_FOUND: Final = "forkwatch.resume.last_event_found"
ATTR_RESUME_PREVIOUS_INCARNATION: Final = "forkwatch.resume.previous_incarnation"
ATTR_RESUME_ANSWERED_SESSION_KEY: Final = "forkwatch.resume.answered_session_key"
ATTR_RESUME_OUTCOME: Final = "forkwatch.resume.outcome"
ATTR_REQUEST_OUTCOME: Final = "forkwatch.request.outcome"
ATTR_REQUEST_DURATION_MS: Final = "forkwatch.request.duration_ms"
ATTR_REQUEST_PROGRESS_COUNT: Final = "forkwatch.request.progress_count"
ATTR_REQUEST_ARGS_DIGEST: Final = "forkwatch.request.args_digest"
ATTR_GUARD_FORK_KIND: Final = "forkwatch.guard.fork_kind"
ATTR_GUARDED: Final = "forkwatch.guarded"

HEADER_SESSION_ID: Final = "mcp-session-id"
HEADER_LAST_EVENT_ID: Final = "last-event-id"
HEADER_PROTOCOL_VERSION: Final = "mcp-protocol-version"
HEADER_SESSION_INCARNATION: Final = "mcp-session-incarnation"
META_INCARNATION: Final = "forkwatch/incarnation"

MAX_STRING_CHARS: Final = 256
"""String attributes are cut to this many UTF-16 code units (docs/telemetry.md, "Bounded values")."""
