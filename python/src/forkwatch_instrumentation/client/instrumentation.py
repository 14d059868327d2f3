"""Client instrumentation for the `mcp` SDK's Streamable HTTP client (docs/telemetry.md)."""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import httpx2
from opentelemetry.trace import TracerProvider

from forkwatch_instrumentation.client.read_tap import ObservedReadStream
from forkwatch_instrumentation.client.sse_events import SseEventFacts
from forkwatch_instrumentation.client.state import (
    AwaitingDelivery,
    ClientSessionState,
    SentRequest,
    fingerprint,
)
from forkwatch_instrumentation.digests import cut
from forkwatch_instrumentation.emitter import SpanEmitter, env_bool, env_int, whole
from forkwatch_instrumentation.event_ring import EventRings
from forkwatch_instrumentation.guard.session_fork_error import FORK_ERROR_CODE
from forkwatch_instrumentation.jsonrpc import MessageInfo, cancelled_request_id
from forkwatch_instrumentation.semconv import (
    ATTR_GEN_AI_TOOL_NAME,
    ATTR_HTTP_REQUEST_METHOD,
    ATTR_HTTP_RESPONSE_STATUS_CODE,
    ATTR_JSONRPC_REQUEST_ID,
    ATTR_MCP_METHOD_NAME,
    ATTR_PROGRESS_TOKEN,
    ATTR_REQUEST_DURATION_MS,
    ATTR_REQUEST_OUTCOME,
    ATTR_REQUEST_PROGRESS_COUNT,
    ATTR_RESUME_ANSWERED_SESSION_KEY,
    ATTR_RESUME_LAST_EVENT_ID,
    ATTR_RESUME_OUTCOME,
    ATTR_RESUME_PREVIOUS_INCARNATION,
    ATTR_SESSION_INCARNATION,
    META_INCARNATION,
    SPAN_REQUEST_SENT,
    SPAN_REQUEST_SETTLED,
    SPAN_RESUME,
)
from forkwatch_instrumentation.server.instrumentation import resume_outcome

if TYPE_CHECKING:
    from forkwatch_instrumentation.client.http_tap import _ClientExchange


class ClientInstrumentation(SseEventFacts):
    """Observes a Streamable HTTP client: `wrap_transport()` taps the wire (events, resumes, requests
    written), `attach(read_stream)` taps what reaches the SDK's `ClientSession` (delivery, settlement).

    Args: `tracer_provider`, `salt`, `record_raw_session_id`, `request_span_delay_ms` as on the server;
    `delivery_timeout_ms` (2000: a wire event not delivered within this is `dropped`), `max_sessions`
    (1024), `max_seen_events_per_session` (4096), `max_pending_requests` (4096),
    `max_buffered_events_per_session` (256), `max_buffered_events` (65536), `max_event_chars` and
    `max_parse_chars` (1 MiB), `inject_trace_context` (True: W3C `traceparent` on requests without one).
    """

    def __init__(
        self,
        *,
        tracer_provider: TracerProvider | None = None,
        salt: str | None = None,
        record_raw_session_id: bool | None = None,
        request_span_delay_ms: int | None = None,
        delivery_timeout_ms: int | None = None,
        max_sessions: int | None = None,
        max_seen_events_per_session: int | None = None,
        max_pending_requests: int | None = None,
        max_buffered_events_per_session: int | None = None,
        max_buffered_events: int | None = None,
        max_event_chars: int | None = None,
        max_parse_chars: int | None = None,
        inject_trace_context: bool = True,
    ) -> None:
        raw = record_raw_session_id
        if raw is None:
            raw = env_bool("FORKWATCH_RECORD_RAW_SESSION_ID", False)
        self.emitter = SpanEmitter("client", tracer_provider, salt, raw)
        delay = request_span_delay_ms
        if delay is None:
            delay = env_int("FORKWATCH_REQUEST_SPAN_DELAY_MS", 1000)
        self.request_span_delay_ms = whole(delay, 1000, "request_span_delay_ms")
        self.delivery_timeout_ms = whole(delivery_timeout_ms, 2000, "delivery_timeout_ms")
        self.max_sessions = whole(max_sessions, 1024, "max_sessions")
        self.max_seen = whole(max_seen_events_per_session, 4096, "max_seen_events_per_session")
        self.max_pending_requests = whole(max_pending_requests, 4096, "max_pending_requests")
        self.max_event_chars = whole(max_event_chars, 1 << 20, "max_event_chars")
        self.max_parse_chars = whole(max_parse_chars, 1 << 20, "max_parse_chars")
        self.rings: EventRings[str] = EventRings(
            whole(max_buffered_events_per_session, 256, "max_buffered_events_per_session"),
            whole(max_buffered_events, 65536, "max_buffered_events"),
        )
        self.inject_trace_context = inject_trace_context
        self.enabled = True
        self.attached = False
        self._sessions: OrderedDict[str, ClientSessionState] = OrderedDict()
        self._pending: OrderedDict[tuple[str | None, str], SentRequest] = OrderedDict()
        self._awaiting: list[AwaitingDelivery] = []

    # ---- explicit API -----------------------------------------------------------------------------

    def wrap_transport(self, inner: httpx2.AsyncBaseTransport | None = None) -> httpx2.AsyncBaseTransport:
        """An httpx2 transport for `httpx2.AsyncClient(transport=...)`, the client given to
        `streamable_http_client(url, http_client=...)`. Put any layer of your own that may drop events
        above the read stream `attach` wraps, never below this."""
        from forkwatch_instrumentation.client.http_tap import ObservedHttpTransport

        return ObservedHttpTransport(self, inner if inner is not None else httpx2.AsyncHTTPTransport())

    def http_client(self, **kwargs: Any) -> httpx2.AsyncClient:
        """`httpx2.AsyncClient(transport=self.wrap_transport(), **kwargs)`, with the SDK's timeouts by default."""
        from mcp.shared._httpx_utils import create_mcp_http_client

        client: httpx2.AsyncClient = create_mcp_http_client(**kwargs)
        client._transport = self.wrap_transport(client._transport)
        return client

    def attach(self, read_stream: Any) -> Any:
        """Wrap the read stream `streamable_http_client` yields, before giving it to `ClientSession`:
        requests are then held back `request_span_delay_ms` and settled by what reaches the SDK."""
        self.attached = True
        return ObservedReadStream(self, read_stream)

    def flush(self) -> None:
        """Emit held-back requests (as still unanswered) and undecided events (without a verdict) now."""
        for key in list(self._pending):
            self._request_due(key)
        for a in list(self._awaiting):
            self._decide(a, None)

    @property
    def buffered_events(self) -> int:
        return self.rings.count

    # ---- wire facts (called by the tap; it catches) -----------------------------------------------

    def session(self, session_id: str) -> ClientSessionState:
        s = self._sessions.get(session_id)
        if s is None:
            s = self._sessions[session_id] = ClientSessionState(session_id)
            while len(self._sessions) > self.max_sessions:
                gone, _ = self._sessions.popitem(last=False)
                self.rings.drop(gone)
        else:
            self._sessions.move_to_end(session_id)
        return s

    def stream_of(self, session_id: str, last_event_id: str) -> str:
        s = self._sessions.get(session_id)
        return s.seen.get(last_event_id, "get") if s is not None else "get"

    def _common(self, sid: str | None) -> dict[str, Any]:
        s = self._sessions.get(sid) if sid is not None else None
        inc = s.incarnation if s is not None else None
        pv = s.protocol_version if s is not None else None
        return self.emitter.common(sid, inc, "server" if inc else None, pv)

    def request_written(self, ex: _ClientExchange, m: MessageInfo) -> None:
        assert m.id is not None and m.method is not None
        attrs: dict[str, Any] = {ATTR_MCP_METHOD_NAME: m.method, ATTR_JSONRPC_REQUEST_ID: m.id}
        if m.progress_token is not None:
            attrs[ATTR_PROGRESS_TOKEN] = m.progress_token
        if m.tool_name is not None:
            attrs[ATTR_GEN_AI_TOOL_NAME] = m.tool_name
        if ex.presented_sid is not None and ex.protocol_version:
            self.session(ex.presented_sid).protocol_version = ex.protocol_version
        r = SentRequest(ex.presented_sid, time.time_ns(), time.monotonic(), attrs, None, m.progress_token)
        key = (ex.presented_sid, m.id)
        self._pending[key] = r
        while len(self._pending) > self.max_pending_requests:
            self._pending.popitem(last=False)
        if m.method == "initialize" or not self.attached or self.request_span_delay_ms == 0:
            self._emit_sent(r)
            return
        try:
            r.timer = asyncio.get_running_loop().call_later(self.request_span_delay_ms / 1000, self._request_due, key)
        except RuntimeError:
            self._emit_sent(r)

    def _emit_sent(self, r: SentRequest) -> None:
        if r.sent_emitted:
            return
        r.sent_emitted = True
        a = self._common(r.session_id)
        a.update(r.attrs)
        self.emitter.emit(SPAN_REQUEST_SENT, a, start_ns=r.time_ns, end_ns=r.time_ns)

    def _request_due(self, key: tuple[str | None, str]) -> None:
        r = self._pending.get(key)
        if r is None or r.sent_emitted:
            return
        self._emit_sent(r)
        if r.session_id is not None:
            self.rings.emit_all(r.session_id, lambda ev, sid=r.session_id: self._emit_event(sid, ev, None))

    def settle(self, key: tuple[str | None, str], outcome: str) -> None:
        r = self._pending.pop(key, None)
        if r is None:
            return
        if r.timer is not None:
            r.timer.cancel()
        if not r.sent_emitted and outcome in ("answered", "error"):
            return  # answered within the delay: cannot be orphaned, nothing to say
        self._emit_sent(r)
        a = self._common(r.session_id)
        # The doc's settled table (and the TS client): method, id, token; the tool name is on `sent` only.
        a.update({k: v for k, v in r.attrs.items() if k != ATTR_GEN_AI_TOOL_NAME})
        a[ATTR_REQUEST_OUTCOME] = outcome
        a[ATTR_REQUEST_DURATION_MS] = (time.monotonic() - r.t0) * 1000.0
        a[ATTR_REQUEST_PROGRESS_COUNT] = r.progress_count
        self.emitter.emit(SPAN_REQUEST_SETTLED, a)
        if outcome not in ("answered", "error") and r.session_id is not None:
            self.rings.emit_all(r.session_id, lambda ev, sid=r.session_id: self._emit_event(sid, ev, None))

    def cancel_written(self, ex: _ClientExchange, m: MessageInfo) -> None:
        """The app's `notifications/cancelled` for one of its requests went on the wire: it stopped
        waiting, as the TypeScript client's aborted signal says (`cancelled`). Whether the SDK still
        reads the server's answer to it (mcp answers `-32800` on the 2025 wire) is a race, so the
        settlement is taken from the cancel. mcp's courtesy cancel for its own read timeout (reason
        `timed out after ...`) is left alone: a timeout is not the app's cancel."""
        rid = cancelled_request_id(m.params)
        reason = m.params.get("reason") if isinstance(m.params, dict) else None
        if rid is None or (isinstance(reason, str) and reason.startswith("timed out")):
            return
        self.settle((ex.presented_sid, rid), "cancelled")

    def exchange_failed(self, ex: _ClientExchange, outcome: str) -> None:
        for rid in ex.request_ids:
            self.settle((ex.presented_sid, rid), outcome)

    def response_started(self, ex: _ClientExchange) -> None:
        sid = ex.session_id
        if sid is None:
            return
        s = self.session(sid)
        if ex.protocol_version:
            s.protocol_version = ex.protocol_version
        if ex.presented_sid is None and ex.request_ids:
            # initialize: its requests were keyed without a session id; re-key them under the answer's.
            for rid in ex.request_ids:
                r = self._pending.pop((None, rid), None)
                if r is not None:
                    r.session_id = sid
                    self._pending[(sid, rid)] = r
        previous = s.incarnation
        changed_inc = ex.incarnation is not None and previous is not None and ex.incarnation != previous
        if ex.incarnation is not None:
            s.incarnation = ex.incarnation
        other_sid = ex.presented_sid is not None and ex.answered_sid is not None and ex.answered_sid != ex.presented_sid
        if ex.last_event_id is not None and ex.presented_sid is not None:
            a = self._common(ex.presented_sid)
            a.update(
                {
                    ATTR_RESUME_LAST_EVENT_ID: cut(ex.last_event_id),
                    ATTR_HTTP_REQUEST_METHOD: ex.method,
                    ATTR_HTTP_RESPONSE_STATUS_CODE: ex.status,
                    ATTR_RESUME_OUTCOME: resume_outcome(ex.status, changed_inc or other_sid),
                }
            )
            if ex.incarnation is not None:
                a[ATTR_SESSION_INCARNATION] = ex.incarnation
            if previous is not None:
                a[ATTR_RESUME_PREVIOUS_INCARNATION] = previous
            if other_sid and ex.answered_sid is not None:
                a[ATTR_RESUME_ANSWERED_SESSION_KEY] = self.emitter.key(ex.answered_sid)
            self.emitter.emit(SPAN_RESUME, a)
            self._moment(ex.presented_sid)
        if other_sid and ex.presented_sid is not None:
            self._moment(ex.presented_sid)
            self._moment(sid)
        elif changed_inc:
            self._moment(sid)
        if ex.status >= 400 and not self.attached:
            for rid in ex.request_ids:
                self.settle((ex.presented_sid, rid), "transport_error")

    def _moment(self, sid: str) -> None:
        self.session(sid).live = True
        self.rings.emit_all(sid, lambda ev: self._emit_event(sid, ev, None))

    def json_answer(self, ex: _ClientExchange, msg: Any) -> None:
        if not isinstance(msg, dict):
            return
        self._note_incarnation(ex, msg)
        if not self.attached and ("result" in msg or "error" in msg) and msg.get("id") is not None:
            self.settle((ex.presented_sid, str(msg["id"])), "error" if "error" in msg else "answered")

    def _note_incarnation(self, ex: _ClientExchange, msg: dict[str, Any]) -> None:
        result = msg.get("result")
        meta = result.get("_meta") if isinstance(result, dict) else None
        inc = meta.get(META_INCARNATION) if isinstance(meta, dict) else None
        if isinstance(inc, str) and ex.session_id is not None:
            self.session(ex.session_id).incarnation = inc[:64]

    def delivered(self, msg: Any) -> None:
        """A message reached the SDK (from the attached read stream)."""
        fp = fingerprint(msg)
        if fp is not None:
            for a in self._awaiting:
                if a.fingerprint == fp:
                    self._decide(a, "delivered")
                    break
        if not isinstance(msg, dict):
            return
        if ("result" in msg or "error" in msg) and msg.get("id") is not None:
            rid = str(msg["id"])
            key = next((k for k in self._pending if k[1] == rid), None)
            if key is not None:
                self.settle(key, _outcome_of(msg))
        elif msg.get("method") == "notifications/progress":
            params = msg.get("params")
            token = params.get("progressToken") if isinstance(params, dict) else None
            if token is not None:
                for r in self._pending.values():
                    if r.progress_token == str(token):
                        r.progress_count += 1

    def stream_ended(self, ex: _ClientExchange, broken: bool) -> None:
        if not broken or self.attached:
            return
        for rid in ex.request_ids:
            self.settle((ex.presented_sid, rid), "stream_broken")


def _outcome_of(msg: dict[str, Any]) -> str:
    """`forkwatch.request.outcome` of an answer; a client guard's failure (code -32003, `data.kind`)
    is `failed_session_lost` (the server lost the session) or `failed_fork`, never a server `error`."""
    if "error" not in msg:
        return "answered"
    err = msg["error"]
    if isinstance(err, dict) and err.get("code") == FORK_ERROR_CODE and isinstance(err.get("data"), dict):
        return "failed_session_lost" if err["data"].get("kind") == "session_not_found" else "failed_fork"
    return "error"
