"""Requests read on a session: held back until they can matter, emitted as `request.received`, settled
when the client cancels one that went out (the server instrumentation's request facts; a mixin of
`ServerInstrumentation`, as server/held-requests.ts is of the TypeScript one)."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from opentelemetry.context import Context

from forkwatch_instrumentation.emitter import logger
from forkwatch_instrumentation.semconv import (
    ATTR_JSONRPC_REQUEST_ID,
    ATTR_MCP_METHOD_NAME,
    ATTR_REQUEST_DURATION_MS,
    ATTR_REQUEST_OUTCOME,
    SPAN_REQUEST_RECEIVED,
    SPAN_REQUEST_SETTLED,
)
from forkwatch_instrumentation.server.state import Incarnation, PendingRequest

if TYPE_CHECKING:
    from forkwatch_instrumentation.server.exchange import Exchange
    from forkwatch_instrumentation.server.instrumentation import ServerInstrumentation


class RequestFacts:
    """`request_read`, `response_seen`, `cancelled` (called by the exchange) and `request.received`."""

    def request_read(
        self: ServerInstrumentation,
        inc: Incarnation,
        ex: Exchange,
        attrs: dict[str, Any],
        ctx: Context | None,
        rid: str,
        method: str,
    ) -> None:
        now = time.time_ns()
        if method == "initialize" or self.request_span_delay_ms == 0:
            self._emit_request(inc, ex.protocol_version, attrs, now, ctx)
            if method != "initialize":
                self._went_out(inc, rid, method, now)
            return
        p = PendingRequest(now, attrs, ctx)
        old = inc.pending.pop(rid, None)
        if old is not None and old.timer is not None:
            old.timer.cancel()
        inc.pending[rid] = p
        try:
            p.timer = asyncio.get_running_loop().call_later(
                self.request_span_delay_ms / 1000, self._request_due, inc, rid
            )
        except RuntimeError:  # no asyncio loop (trio): emit at once rather than lose it
            self._request_due(inc, rid)

    def response_seen(self: ServerInstrumentation, inc: Incarnation, rid: str) -> None:
        p = inc.pending.pop(rid, None)
        if p is not None and p.timer is not None:
            p.timer.cancel()

    def cancelled(self: ServerInstrumentation, inc: Incarnation, rid: str) -> None:
        """The client's `notifications/cancelled` for `rid` was read: it no longer waits for the answer,
        so the session's later end must not read as the request's orphaning (docs/telemetry.md,
        `forkwatch.request.settled`). Still held back: dropped, no span, as one answered in time. Its
        `request.received` out: a server-side `request.settled` (`cancelled`), stamped now."""
        p = inc.pending.pop(rid, None)
        if p is not None:
            if p.timer is not None:
                p.timer.cancel()
            return
        out = inc.awaiting.pop(rid, None)
        if out is None:  # answered already, or never seen: nothing was left waiting
            return
        now = time.time_ns()
        attrs = self.emitter.common(inc.session_id, inc.id, inc.source, inc.protocol_version)
        attrs.update(
            {
                ATTR_MCP_METHOD_NAME: out[0],
                ATTR_JSONRPC_REQUEST_ID: rid,
                ATTR_REQUEST_OUTCOME: "cancelled",
                ATTR_REQUEST_DURATION_MS: (now - out[1]) / 1e6,
            }
        )
        self.emitter.emit(SPAN_REQUEST_SETTLED, attrs, start_ns=now, end_ns=now)

    def _went_out(self: ServerInstrumentation, inc: Incarnation, rid: str, method: str, arrived_ns: int) -> None:
        # Bounded as the event ids are: past it, a cancel or answer of this request is not tracked.
        if len(inc.awaiting) < self.max_tracked_event_ids:
            inc.awaiting[rid] = (method, arrived_ns)

    def _request_due(self: ServerInstrumentation, inc: Incarnation, rid: str) -> None:
        try:
            p = inc.pending.pop(rid, None)
            if p is None:
                return
            if p.timer is not None:
                p.timer.cancel()
            self._emit_request(inc, inc.protocol_version, p.attrs, p.time_ns, p.context)
            # The session's buffered events, once (later events are buffered again, but its answer
            # is emitted when sent: see SseEventFacts.event_sent).
            self.rings.emit_all(inc, lambda ev: self._emit_event(inc, ev))
            self._went_out(inc, rid, str(p.attrs.get(ATTR_MCP_METHOD_NAME, "")), p.time_ns)
        except Exception:
            logger.debug("forkwatch: request span not emitted", exc_info=True)

    def _emit_request(
        self: ServerInstrumentation,
        inc: Incarnation,
        pv: str | None,
        attrs: dict[str, Any],
        t: int,
        ctx: Context | None,
    ) -> None:
        a = self.emitter.common(inc.session_id, inc.id, inc.source, pv)
        a.update(attrs)
        self.emitter.emit(SPAN_REQUEST_RECEIVED, a, start_ns=t, end_ns=t, context=ctx)
