"""Events received on the wire: recorded at once, buffered until a moment, or held for a delivery
decision (the client instrumentation's SSE-event facts; a mixin of `ClientInstrumentation`)."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from forkwatch_instrumentation.client.state import AwaitingDelivery, fingerprint_of_data
from forkwatch_instrumentation.digests import cut, parse_event_id, payload_digest
from forkwatch_instrumentation.emitter import logger
from forkwatch_instrumentation.event_ring import BufferedEvent
from forkwatch_instrumentation.jsonrpc import parse_messages
from forkwatch_instrumentation.semconv import (
    ATTR_CLIENT_DELIVERY,
    ATTR_CLIENT_SEEN_BEFORE,
    ATTR_JSONRPC_KIND,
    ATTR_JSONRPC_REQUEST_ID,
    ATTR_MCP_METHOD_NAME,
    ATTR_PROGRESS_TOKEN,
    ATTR_SSE_EVENT_ID,
    ATTR_SSE_EVENT_SEQ,
    ATTR_SSE_EVENT_SEQ_SOURCE,
    ATTR_SSE_PAYLOAD_BYTES,
    ATTR_SSE_PAYLOAD_DIGEST,
    ATTR_SSE_STREAM_ID,
    SPAN_SSE_EVENT,
)

if TYPE_CHECKING:
    from forkwatch_instrumentation.client.http_tap import _ClientExchange
    from forkwatch_instrumentation.client.instrumentation import ClientInstrumentation


class SseEventFacts:
    """`event_received` (called by the wire tap), its delivery decision and its span."""

    def event_received(self: ClientInstrumentation, ex: _ClientExchange, event_id: str | None, data: str) -> None:
        sid = ex.session_id
        if data and (not self.attached or event_id is None):
            for m in parse_messages(data):
                if m.kind in ("response", "error") and m.id is not None and not self.attached:
                    self.settle((ex.presented_sid, m.id), "error" if m.kind == "error" else "answered")
        if data and ex.presented_sid is None:
            try:
                import json

                v = json.loads(data)
                if isinstance(v, dict):
                    self._note_incarnation(ex, v)
            except ValueError:
                pass
        if event_id is None or sid is None:
            return
        s = self.session(sid)
        seen_before = event_id in s.seen
        s.seen[event_id] = ex.stream_name
        s.seen.move_to_end(event_id)
        if len(s.seen) > self.max_seen:
            s.seen.popitem(last=False)
        parsed = parse_event_id(event_id)
        extra: dict[str, Any] = {ATTR_SSE_STREAM_ID: cut(ex.stream_name), ATTR_CLIENT_SEEN_BEFORE: seen_before}
        if parsed.seq is not None:
            extra[ATTR_SSE_EVENT_SEQ] = parsed.seq
            extra[ATTR_SSE_EVENT_SEQ_SOURCE] = parsed.source
        now = time.time_ns()
        if (s.live or self.request_span_delay_ms == 0) and self.attached and data:
            a = AwaitingDelivery(sid, fingerprint_of_data(data), now, event_id, data, extra, None)
            self._awaiting.append(a)
            try:
                a.timer = asyncio.get_running_loop().call_later(
                    self.delivery_timeout_ms / 1000, self._decide, a, "dropped"
                )
            except RuntimeError:
                self._decide(a, None)
            return
        ev = BufferedEvent(now, event_id, data, None, extra)
        if s.live or self.request_span_delay_ms == 0:
            self._emit_event(sid, ev, None)
        else:
            self.rings.add(sid, ev)

    def _decide(self: ClientInstrumentation, a: AwaitingDelivery, delivery: str | None) -> None:
        try:
            if a not in self._awaiting:
                return
            self._awaiting.remove(a)
            if a.timer is not None:
                a.timer.cancel()
            self._emit_event(a.session_id, BufferedEvent(a.time_ns, a.event_id, a.data, None, a.extra), delivery)
        except Exception:
            logger.debug("forkwatch: event not emitted", exc_info=True)

    def _emit_event(self: ClientInstrumentation, sid: str, ev: BufferedEvent, delivery: str | None) -> None:
        a = self._common(sid)
        a[ATTR_SSE_EVENT_ID] = cut(ev.event_id)
        a.update(ev.extra)
        a[ATTR_SSE_PAYLOAD_DIGEST] = payload_digest(ev.data)
        a[ATTR_SSE_PAYLOAD_BYTES] = len(ev.data.encode("utf-8", "surrogatepass"))
        msgs = parse_messages(ev.data)
        m = msgs[0] if msgs else None
        a[ATTR_JSONRPC_KIND] = m.kind if m is not None else "none"
        if m is not None:
            if m.id is not None:
                a[ATTR_JSONRPC_REQUEST_ID] = m.id
            if m.method is not None:
                a[ATTR_MCP_METHOD_NAME] = m.method
            if m.progress_token is not None and m.method == "notifications/progress":
                a[ATTR_PROGRESS_TOKEN] = m.progress_token
        if not ev.data:
            a[ATTR_CLIENT_DELIVERY] = "no_payload"
        elif delivery is not None:
            a[ATTR_CLIENT_DELIVERY] = delivery
        self.emitter.emit(SPAN_SSE_EVENT, a, start_ns=ev.time_ns, end_ns=ev.time_ns)
