"""`ClientGuard`: the client guard for the `mcp` SDK's Streamable HTTP client (one connection)."""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Awaitable
from typing import Any, TypeVar

import httpx2
from opentelemetry.trace import TracerProvider

from forkwatch_instrumentation.digests import payload_digest
from forkwatch_instrumentation.emitter import SpanEmitter, logger, whole
from forkwatch_instrumentation.guard.fork_guard import ForkGuard, HighWaterMark
from forkwatch_instrumentation.guard.read_stream import GuardedReadStream
from forkwatch_instrumentation.guard.session_fork_error import FORK_ERROR_CODE, SessionForkError
from forkwatch_instrumentation.guard.sse_filter import FilteredSseStream
from forkwatch_instrumentation.semconv import (
    ATTR_GUARD_FORK_KIND,
    ATTR_RESUME_LAST_EVENT_ID,
    ATTR_SESSION_INCARNATION,
    HEADER_SESSION_INCARNATION,
    META_INCARNATION,
    SPAN_GUARD_FORK,
)

T = TypeVar("T")


class ClientGuard:
    """Guards one client connection (`streamable_http_client` + `ClientSession`) against forks.

    `wrap_transport()` checks every answer (a `404`/`410` of the session, a `409` to a resume, a
    changed session id or incarnation, sequence regressions, and a resume answered `2xx` whose stream
    ends without one event: the SDK server's answer when its log lacks the cursor) and drops exact
    duplicate events (dedup keyed by session, incarnation and event id). `attach(read_stream)` lets
    it fail every pending request at once on a fork: each gets a JSON-RPC error (code -32003) that
    `guarded()` turns into the `SessionForkError`. After a fork, requests on the connection are
    refused with it, and `forkwatch.guard.fork` is emitted.

    Args: `tracer_provider`, `salt` as for the instrumentation; `max_seen_events_per_session` (4096
    dedup keys), `max_streams_per_session` (256), `max_event_chars` (1 MiB: larger events pass
    unchecked), `max_pending_requests` (4096 request ids remembered to fail on a fork).
    """

    def __init__(
        self,
        *,
        tracer_provider: TracerProvider | None = None,
        salt: str | None = None,
        max_seen_events_per_session: int | None = None,
        max_streams_per_session: int | None = None,
        max_event_chars: int | None = None,
        max_pending_requests: int | None = None,
    ) -> None:
        self.emitter = SpanEmitter("client", tracer_provider, salt, False, guarded=True)
        self.max_seen = whole(max_seen_events_per_session, 4096, "max_seen_events_per_session")
        self.max_streams = whole(max_streams_per_session, 256, "max_streams_per_session")
        self.max_event_chars = whole(max_event_chars, 1 << 20, "max_event_chars")
        self.max_pending = whole(max_pending_requests, 4096, "max_pending_requests")
        self.session: ForkGuard | None = None
        self.forked: SessionForkError | None = None
        self._pending: OrderedDict[str, Any] = OrderedDict()
        self._read: GuardedReadStream | None = None
        self._stream_of_cursor: OrderedDict[str, str] = OrderedDict()

    # ---- explicit API -----------------------------------------------------------------------------

    def wrap_transport(self, inner: httpx2.AsyncBaseTransport | None = None) -> httpx2.AsyncBaseTransport:
        """An httpx2 transport for the `httpx2.AsyncClient` given to `streamable_http_client`. Put it
        above the instrumentation's `wrap_transport` (the instrumentation then sees the wire)."""
        return _GuardedHttpTransport(self, inner if inner is not None else httpx2.AsyncHTTPTransport())

    def http_client(self, inner: httpx2.AsyncBaseTransport | None = None, **kwargs: Any) -> httpx2.AsyncClient:
        """An `httpx2.AsyncClient` with the SDK's timeouts whose transport is `wrap_transport(inner)`."""
        from mcp.shared._httpx_utils import create_mcp_http_client

        client: httpx2.AsyncClient = create_mcp_http_client(**kwargs)
        client._transport = self.wrap_transport(inner if inner is not None else client._transport)
        return client

    def attach(self, read_stream: Any) -> Any:
        """Wrap the read stream before `ClientSession` (and above the instrumentation's `attach`)."""
        self._read = GuardedReadStream(read_stream, self._delivered)
        return self._read

    async def guarded(self, awaitable: Awaitable[T]) -> T:
        """Await a call of the session; an error caused by a fork is raised as the `SessionForkError`."""
        if self.forked is not None:
            close = getattr(awaitable, "close", None)
            if close is not None:
                close()  # a coroutine never awaited: closed, not left to warn
            raise self.forked
        try:
            return await awaitable
        except Exception as err:
            if self.forked is not None:
                raise self.forked from err
            raise

    @property
    def session_key(self) -> str | None:
        return self.emitter.key(self.session.session_id) if self.session is not None else None

    # ---- decisions (called by the transport) ------------------------------------------------------

    def sent(self, request: httpx2.Request) -> tuple[bool, str, HighWaterMark | None]:
        """Records the requests a POST carries; returns (is initialize, stream id, floor)."""
        is_init = False
        first: str = ""
        if request.method == "POST":
            try:
                body = json.loads(request.content or b"null")
            except (ValueError, httpx2.RequestNotRead):
                body = None
            for m in body if isinstance(body, list) else [body]:
                if isinstance(m, dict) and "method" in m and m.get("id") is not None:
                    rid = m["id"]
                    first = first or str(rid)
                    is_init = is_init or m["method"] == "initialize"
                    self._pending[repr(rid)] = rid
                    while len(self._pending) > self.max_pending:
                        self._pending.popitem(last=False)
        floor = self.session.high_water_mark() if self.session is not None else None
        return is_init, f"post:{first}", floor

    def check(
        self,
        request: httpx2.Request,
        response: httpx2.Response,
        is_init: bool,
        stream_id: str,
        floor: HighWaterMark | None,
    ) -> httpx2.Response:
        """Raises `SessionForkError` for an answer that forks; wraps an SSE body in the event filter."""
        presented = request.headers.get("mcp-session-id")
        answered = response.headers.get("mcp-session-id")
        inc = response.headers.get(HEADER_SESSION_INCARNATION)
        incarnation = inc if inc and len(inc) <= 256 else None
        cursor_sent = request.headers.get("last-event-id")
        if is_init and response.is_success and answered:
            self.session = ForkGuard(answered, incarnation, self.emitter.key(answered), self.max_seen, self.max_streams)
        elif self.session is None and presented:
            self.session = ForkGuard(presented, None, self.emitter.key(presented), self.max_seen, self.max_streams)
        session = self.session
        cursor = cursor_sent or (session.last_event_id if session is not None else None)
        key = self.emitter.key(presented) if presented else None
        status = response.status_code
        if presented and (status == 404 or (cursor_sent is not None and status == 410)):
            raise SessionForkError("session_not_found", key, cursor, f"HTTP {status}")
        if cursor_sent is not None and status == 409:
            raise SessionForkError("replay_gap", key, cursor, "HTTP 409")
        if session is None:
            return response
        if not is_init and answered and answered != session.session_id:
            raise SessionForkError("session_id_changed", self.emitter.key(session.session_id), cursor)
        if not is_init:
            session.check_incarnation(incarnation, cursor)
        if request.method == "GET":
            stream_id = self._stream_of_cursor.get(cursor_sent, "get") if cursor_sent is not None else "get"
        if cursor_sent is not None and response.is_success:
            session.resume(cursor_sent, answered, incarnation, stream_id)
        ctype = response.headers.get("content-type", "").partition(";")[0].strip().lower()
        if not response.is_success or ctype != "text/event-stream":
            return response
        if cursor_sent is None and not is_init:
            session.open_stream(stream_id, floor or {})

        def block(event_id: str | None, data: str) -> bool:
            if is_init and data:
                self._init_incarnation(session, data)
            if event_id is None:
                return True
            keep = session.accept_event(event_id, stream_id, payload_digest(data) if data else None)
            if keep:
                self._stream_of_cursor[event_id] = stream_id
                while len(self._stream_of_cursor) > self.max_seen:
                    self._stream_of_cursor.popitem(last=False)
            return keep

        def ended(events: int) -> None:
            if cursor_sent is not None and events == 0 and self.forked is None:
                self.fork(
                    SessionForkError(
                        "replay_gap",
                        self.emitter.key(session.session_id),
                        cursor_sent,
                        "resume answered with an empty stream",
                    )
                )

        return httpx2.Response(
            status,
            headers=response.headers,
            stream=FilteredSseStream(response.stream, block, self.fork, ended, self.max_event_chars),
            request=request,
            extensions=response.extensions,
        )

    def _init_incarnation(self, session: ForkGuard, data: str) -> None:
        try:
            msg = json.loads(data)
            meta = msg.get("result", {}).get("_meta", {}) if isinstance(msg, dict) else {}
            inc = meta.get(META_INCARNATION) if isinstance(meta, dict) else None
        except (ValueError, AttributeError):
            return
        if isinstance(inc, str) and len(inc) <= 256:
            session.check_incarnation(inc)

    def fork(self, err: Exception) -> None:
        """The fork: remembered, reported, and every pending request failed at once."""
        if not isinstance(err, SessionForkError) or self.forked is not None:
            return
        self.forked = err
        session = self.session
        self.emitter.emit(
            SPAN_GUARD_FORK,
            {
                **self.emitter.common(session.session_id if session else None, None, None),
                ATTR_GUARD_FORK_KIND: err.kind,
                ATTR_RESUME_LAST_EVENT_ID: err.last_event_id[:256] if err.last_event_id else None,
                ATTR_SESSION_INCARNATION: session.incarnation if session else None,
            },
        )
        logger.info("forkwatch: session fork (%s): failing %d pending request(s)", err.kind, len(self._pending))
        if self._read is None:
            return
        from mcp.shared.message import SessionMessage
        from mcp.types import ErrorData, JSONRPCError

        failed = [
            SessionMessage(
                message=JSONRPCError(
                    jsonrpc="2.0",
                    id=rid,
                    error=ErrorData(code=FORK_ERROR_CODE, message=f"SessionForkError: {err}", data={"kind": err.kind}),
                )
            )
            for rid in self._pending.values()
        ]
        self._pending.clear()
        self._read.inject(failed)

    def _delivered(self, item: Any) -> None:
        message = getattr(item, "message", None)
        if message is not None and not hasattr(message, "method"):
            rid = getattr(message, "id", None)
            if rid is not None:
                self._pending.pop(repr(rid), None)


class _GuardedHttpTransport(httpx2.AsyncBaseTransport):
    def __init__(self, guard: ClientGuard, inner: httpx2.AsyncBaseTransport) -> None:
        self._guard = guard
        self._inner = inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        guard = self._guard
        if guard.forked is not None and request.method != "DELETE":
            raise guard.forked
        try:
            decided = guard.sent(request)
        except Exception:
            logger.debug("forkwatch: guard did not read the request", exc_info=True)
            decided = (False, "post:", None)
        response = await self._inner.handle_async_request(request)
        try:
            return guard.check(request, response, *decided)
        except SessionForkError as err:
            await response.aclose()
            guard.fork(err)
            raise
        except Exception:
            logger.debug("forkwatch: guard check failed", exc_info=True)
            return response

    async def aclose(self) -> None:
        await self._inner.aclose()
