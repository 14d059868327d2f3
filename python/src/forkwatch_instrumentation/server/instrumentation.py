"""Server instrumentation for the `mcp` SDK's Streamable HTTP session manager (docs/telemetry.md)."""

from __future__ import annotations

import contextvars
import weakref
from collections import OrderedDict
from typing import Any

from opentelemetry.trace import TracerProvider

from forkwatch_instrumentation.digests import cut
from forkwatch_instrumentation.emitter import SpanEmitter, env_bool, env_int, logger, whole
from forkwatch_instrumentation.event_ring import EventRings
from forkwatch_instrumentation.semconv import (
    ATTR_HTTP_REQUEST_METHOD,
    ATTR_HTTP_RESPONSE_STATUS_CODE,
    ATTR_RESUME_LAST_EVENT_FOUND,
    ATTR_RESUME_LAST_EVENT_ID,
    ATTR_RESUME_OUTCOME,
    ATTR_SESSION_CLIENT_SUPPLIED_ID,
    ATTR_SESSION_CREATED_BY,
    ATTR_SESSION_END_REASON,
    SPAN_RESUME,
    SPAN_SESSION_CREATED,
    SPAN_SESSION_ENDED,
)
from forkwatch_instrumentation.server.asgi_app import observe_app, stopped_flushes
from forkwatch_instrumentation.server.exchange import Exchange, header, trace_context
from forkwatch_instrumentation.server.requests import RequestFacts
from forkwatch_instrumentation.server.sse_events import SseEventFacts
from forkwatch_instrumentation.server.state import Incarnation
from forkwatch_instrumentation.server.wrappers import ObservedEventStore, ObservedTransports

# Set by the manager wrapper around one request; the transport wrapper marks it served.
_SERVED: contextvars.ContextVar[list[bool] | None] = contextvars.ContextVar("forkwatch_served", default=None)

_MAX_INCARNATIONS_PER_ID = 8


def resume_outcome(status: int, created_here: bool) -> str:
    """`forkwatch.resume.outcome` from the status answered (the TS rule, server/resume-outcome.ts)."""
    if status in (404, 410):
        return "rejected_404"
    if status == 409:
        return "rejected_gap"
    if 200 <= status < 300:
        return "forked" if created_here else "resumed"
    return "rejected_other"


class ServerInstrumentation(RequestFacts, SseEventFacts):
    """Observes `StreamableHTTPSessionManager`s and their transports; never changes what they answer.

    Args (every bound a whole number; a bad value falls back to its default with a warning):
        tracer_provider: where spans go (default: the global provider, looked up at first span).
        salt: session-key salt (default `FORKWATCH_SESSION_SALT`, read now; else empty).
        record_raw_session_id: also record `mcp.session.id` (default `FORKWATCH_RECORD_RAW_SESSION_ID` or False).
        request_span_delay_ms: a request answered within this (ms) emits no `request.received`; 0 emits every
            request and every SSE event at once (default `FORKWATCH_REQUEST_SPAN_DELAY_MS` or 1000).
        max_buffered_events_per_session: events kept per incarnation until a moment (default 256).
        max_buffered_events: events kept across all sessions (default 65536).
        max_tracked_event_ids: event ids remembered per incarnation, for `replayed`/`last_event_found` (1024).
        max_tracked_sessions: session ids whose incarnations are remembered (default 10000).
        max_sse_event_chars: larger SSE events pass unrecorded (default 1 MiB).
        max_body_bytes: larger request/JSON bodies pass uninspected (default 4 MiB).
        shutdown_flush_timeout_ms: when an observed manager stops (the app's lifespan ends), the
            tracer provider is flushed for at most this long, so that the sessions it ended reach the
            detector before the process exits (default `FORKWATCH_SHUTDOWN_FLUSH_TIMEOUT_MS` or 2000;
            0: no flush).
    """

    def __init__(
        self,
        *,
        tracer_provider: TracerProvider | None = None,
        salt: str | None = None,
        record_raw_session_id: bool | None = None,
        request_span_delay_ms: int | None = None,
        max_buffered_events_per_session: int | None = None,
        max_buffered_events: int | None = None,
        max_tracked_event_ids: int | None = None,
        max_tracked_sessions: int | None = None,
        max_sse_event_chars: int | None = None,
        max_body_bytes: int | None = None,
        shutdown_flush_timeout_ms: int | None = None,
    ) -> None:
        raw = (
            env_bool("FORKWATCH_RECORD_RAW_SESSION_ID", False)
            if record_raw_session_id is None
            else record_raw_session_id
        )
        self.emitter = SpanEmitter("server", tracer_provider, salt, raw)
        delay = (
            env_int("FORKWATCH_REQUEST_SPAN_DELAY_MS", 1000) if request_span_delay_ms is None else request_span_delay_ms
        )
        self.request_span_delay_ms = whole(delay, 1000, "request_span_delay_ms")
        self.max_tracked_event_ids = whole(max_tracked_event_ids, 1024, "max_tracked_event_ids")
        self.max_tracked_sessions = whole(max_tracked_sessions, 10000, "max_tracked_sessions")
        self.max_sse_event_chars = whole(max_sse_event_chars, 1 << 20, "max_sse_event_chars")
        self.max_body_bytes = whole(max_body_bytes, 4 << 20, "max_body_bytes")
        flush_ms = (
            env_int("FORKWATCH_SHUTDOWN_FLUSH_TIMEOUT_MS", 2000)
            if shutdown_flush_timeout_ms is None
            else shutdown_flush_timeout_ms
        )
        self.shutdown_flush_timeout_ms = whole(flush_ms, 2000, "shutdown_flush_timeout_ms")
        self.rings: EventRings[Incarnation] = EventRings(
            whole(max_buffered_events_per_session, 256, "max_buffered_events_per_session"),
            whole(max_buffered_events, 65536, "max_buffered_events"),
        )
        self._incs: weakref.WeakKeyDictionary[Any, Incarnation] = weakref.WeakKeyDictionary()
        self._by_id: OrderedDict[str, list[Incarnation]] = OrderedDict()
        self.enabled = True

    @property
    def buffered_events(self) -> int:
        """SSE events held now, awaiting a moment."""
        return self.rings.count

    # ---- explicit API ---------------------------------------------------------------------------

    def observe_manager(self, manager: Any) -> Any:
        """Observe a `StreamableHTTPSessionManager` (or a subclass): every transport it registers, and
        resumes it answers without one (its `404` for an unknown session). Returns the manager."""
        try:
            if getattr(manager, "_forkwatch_observed", None) is self:
                return manager
            manager._forkwatch_observed = self
            inst = self
            manager._server_instances = ObservedTransports(self, manager, manager._server_instances)
            original = manager._handle_stateful_request

            async def handle_stateful_request(scope: Any, receive: Any, send: Any) -> None:
                await inst._manager_request(original, scope, receive, send)

            manager._handle_stateful_request = handle_stateful_request
            run = getattr(manager, "run", None)
            if callable(run):
                manager.run = lambda: stopped_flushes(inst, run())
        except Exception:
            logger.debug("forkwatch: manager not observed", exc_info=True)
        return manager

    def observe_app(self, app: Any) -> Any:
        """Observe the session managers a Starlette app makes in its lifespan, as it starts: FastMCP 4.x's
        `http_app()` builds a new one on every lifespan cycle (server/asgi_app.py). Returns the app."""
        return observe_app(self, app)

    def observe_transport(self, transport: Any, manager: Any = None) -> Any:
        """Observe one `StreamableHTTPServerTransport` (call it on every transport you create, rebuilt
        ones under an old id included). Stateless transports (no session id) are left alone."""
        try:
            if transport in self._incs or getattr(transport, "mcp_session_id", None) is None:
                return transport
            inc = Incarnation(session_id=transport.mcp_session_id, manager=manager)
            self._incs[transport] = inc
            self._track(inc)
            inst = self
            handle = transport.handle_request
            terminate = transport.terminate

            async def handle_request(scope: Any, receive: Any, send: Any) -> None:
                await inst._transport_request(transport, inc, handle, scope, receive, send)

            async def terminate_observed() -> None:
                inst._ended(transport, inc, None)
                await terminate()

            transport.handle_request = handle_request
            transport.terminate = terminate_observed
            store = getattr(transport, "_event_store", None)
            if store is not None:
                transport._event_store = ObservedEventStore(store, inc, self.max_tracked_event_ids)
                inc.has_store = True
        except Exception:
            logger.debug("forkwatch: transport not observed", exc_info=True)
        return transport

    def mark_ended(self, transport: Any, reason: str) -> None:
        """Say why a transport is about to end (`reaped_idle`, `evicted_capacity`, ...) before closing it."""
        inc = self._incs.get(transport)
        if inc is not None and not inc.ended:
            inc.end_reason = reason

    def flush(self) -> None:
        """Emit requests still held back (as unanswered, with their arrival times) now."""
        for incs in list(self._by_id.values()):
            for inc in incs:
                for rid in list(inc.pending):
                    self._request_due(inc, rid)

    def stopped(self) -> None:
        """A manager stopped (its sessions ended): emit what is held and flush the tracer provider
        for at most `shutdown_flush_timeout_ms`. Called by the wrappers; never raises."""
        try:
            self.flush()
        except Exception:
            logger.debug("forkwatch: held requests not emitted at shutdown", exc_info=True)
        self.emitter.force_flush(self.shutdown_flush_timeout_ms)

    # ---- internals --------------------------------------------------------------------------------

    def _track(self, inc: Incarnation) -> None:
        incs = self._by_id.get(inc.session_id)
        if incs is None:
            incs = self._by_id[inc.session_id] = []
        else:
            self._by_id.move_to_end(inc.session_id)
        incs.append(inc)
        if len(incs) > _MAX_INCARNATIONS_PER_ID:
            self.rings.drop(incs.pop(0))
        while len(self._by_id) > self.max_tracked_sessions:
            _, gone = self._by_id.popitem(last=False)
            for g in gone:
                self.rings.drop(g)

    async def _manager_request(self, original: Any, scope: Any, receive: Any, send: Any) -> None:
        sid = header(scope, "mcp-session-id")
        last = header(scope, "last-event-id")
        if not self.enabled or sid is None or last is None:
            await original(scope, receive, send)
            return
        served = [False]
        token = _SERVED.set(served)
        status: list[int] = []

        async def watch(message: Any) -> None:
            if message.get("type") == "http.response.start":
                status.append(int(message.get("status", 0)))
            await send(message)

        try:
            await original(scope, receive, watch)
        finally:
            _SERVED.reset(token)
            if not served[0] and status:
                try:
                    self._unserved_resume(scope, sid, last, status[0])
                except Exception:
                    logger.debug("forkwatch: resume not recorded", exc_info=True)

    def _unserved_resume(self, scope: Any, sid: str, last: str, status: int) -> None:
        """A resume the app answered without a transport (the SDK's 404 for an unknown session)."""
        ctx = trace_context(scope)
        attrs = self.emitter.common(sid, None, None, header(scope, "mcp-protocol-version"))
        attrs.update(
            {
                ATTR_RESUME_LAST_EVENT_ID: cut(last),
                ATTR_HTTP_REQUEST_METHOD: scope.get("method", "GET"),
                ATTR_HTTP_RESPONSE_STATUS_CODE: status,
                ATTR_RESUME_OUTCOME: resume_outcome(status, False),
            }
        )
        self.emitter.emit(SPAN_RESUME, attrs, context=ctx)
        self._moment(sid, None)

    async def _transport_request(
        self, transport: Any, inc: Incarnation, handle: Any, scope: Any, receive: Any, send: Any
    ) -> None:
        served = _SERVED.get()
        if served is not None:
            served[0] = True
        if not self.enabled or scope.get("type") != "http":
            await handle(scope, receive, send)
            return
        ex: Exchange | None = None
        try:
            ex = Exchange(self, inc, scope)
        except Exception:
            logger.debug("forkwatch: request not observed", exc_info=True)
        if ex is None:
            await handle(scope, receive, send)
            return
        await handle(scope, ex.wrap_receive(receive), ex.wrap_send(send))

    # ---- facts, called by Exchange (each caller catches) -------------------------------------------

    def created(self, inc: Incarnation, ex: Exchange, created_by: str) -> None:
        inc.created = True
        inc.created_by_initialize = created_by == "initialize"
        ex.created_here = True
        attrs = self.emitter.common(inc.session_id, inc.id, inc.source, ex.protocol_version)
        attrs.update(
            {
                ATTR_SESSION_CREATED_BY: created_by,
                ATTR_SESSION_CLIENT_SUPPLIED_ID: ex.presented_sid == inc.session_id,
                ATTR_HTTP_REQUEST_METHOD: ex.method,
            }
        )
        if ex.last_event_id is not None:
            attrs[ATTR_RESUME_LAST_EVENT_ID] = cut(ex.last_event_id)
        self.emitter.emit(SPAN_SESSION_CREATED, attrs, context=ex.context)
        if not inc.created_by_initialize:
            self._moment(inc.session_id, inc)

    def resume_answered(self, inc: Incarnation, ex: Exchange, status: int) -> None:
        assert ex.last_event_id is not None
        attrs = self.emitter.common(inc.session_id, inc.id, inc.source, ex.protocol_version)
        attrs.update(
            {
                ATTR_RESUME_LAST_EVENT_ID: cut(ex.last_event_id),
                ATTR_HTTP_REQUEST_METHOD: ex.method,
                ATTR_HTTP_RESPONSE_STATUS_CODE: status,
                ATTR_RESUME_OUTCOME: resume_outcome(status, ex.created_here),
            }
        )
        if inc.has_store:
            attrs[ATTR_RESUME_LAST_EVENT_FOUND] = ex.last_event_id in inc.stored or ex.last_event_id in inc.seen
        self.emitter.emit(SPAN_RESUME, attrs, context=ex.context)
        self._moment(inc.session_id, inc)

    def answered_elsewhere(self, presented: str, inc: Incarnation) -> None:
        """A request answered under another session id than it presented: a moment for both."""
        self._moment(presented, None)
        self._moment(inc.session_id, inc)

    def _moment(self, session_id: str, serving: Incarnation | None) -> None:
        """Emit the buffered events of every incarnation of `session_id` that did not end by DELETE."""
        for inc in list(self._by_id.get(session_id, ())):
            if inc.end_reason == "closed_by_client":
                continue
            self.rings.emit_all(inc, lambda ev, inc=inc: self._emit_event(inc, ev))
        if serving is not None:
            serving.live = True

    def _ended(self, transport: Any, inc: Incarnation, reason: str | None) -> None:
        try:
            if inc.ended or not inc.created:
                inc.ended = True
                return
            inc.ended = True
            inc.end_reason = reason or inc.end_reason or self._end_reason(transport, inc)
            if inc.pending:
                for rid in list(inc.pending):
                    self._request_due(inc, rid)
            if inc.awaiting:
                # Unanswered requests whose received span went out: what was sent since is evidence.
                self.rings.emit_all(inc, lambda ev: self._emit_event(inc, ev))
            if inc.end_reason == "closed_by_client":
                self.rings.drop(inc)
            attrs = self.emitter.common(inc.session_id, inc.id, inc.source, inc.protocol_version)
            attrs[ATTR_SESSION_END_REASON] = inc.end_reason
            self.emitter.emit(SPAN_SESSION_ENDED, attrs)
        except Exception:
            logger.debug("forkwatch: session end not recorded", exc_info=True)

    @staticmethod
    def _end_reason(transport: Any, inc: Incarnation) -> str:
        if inc.deleting:
            return "closed_by_client"
        idle = getattr(transport, "idle_scope", None)
        if idle is not None and getattr(idle, "cancel_called", False):
            return "reaped_idle"
        if inc.manager is not None and getattr(inc.manager, "_task_group", object()) is None:
            return "server_shutdown"
        return "transport_closed"
