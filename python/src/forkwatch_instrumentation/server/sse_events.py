"""Events sent on a session's streams: numbered, buffered until a moment or recorded at once (the
server instrumentation's SSE-event facts; a mixin of `ServerInstrumentation`)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from forkwatch_instrumentation.digests import cut, parse_event_id, payload_digest
from forkwatch_instrumentation.event_ring import BufferedEvent
from forkwatch_instrumentation.jsonrpc import parse_messages
from forkwatch_instrumentation.semconv import (
    ATTR_JSONRPC_KIND,
    ATTR_JSONRPC_REQUEST_ID,
    ATTR_MCP_METHOD_NAME,
    ATTR_PROGRESS_TOKEN,
    ATTR_SSE_EVENT_ID,
    ATTR_SSE_EVENT_SEQ,
    ATTR_SSE_EVENT_SEQ_SOURCE,
    ATTR_SSE_PAYLOAD_BYTES,
    ATTR_SSE_PAYLOAD_DIGEST,
    ATTR_SSE_REPLAYED,
    ATTR_SSE_STREAM_ID,
    SPAN_SSE_EVENT,
)

if TYPE_CHECKING:
    from forkwatch_instrumentation.server.exchange import Exchange
    from forkwatch_instrumentation.server.instrumentation import ServerInstrumentation
    from forkwatch_instrumentation.server.state import Incarnation


class SseEventFacts:
    """`event_sent` (called by the exchange) and the `forkwatch.sse.event` span."""

    def event_sent(self: ServerInstrumentation, inc: Incarnation, ex: Exchange, event_id: str, data: str) -> None:
        replayed = event_id in inc.seen
        parsed = parse_event_id(event_id)
        if parsed.seq is not None:
            seq, source = parsed.seq, parsed.source
        else:
            first = inc.seen.get(event_id)
            if first is None:
                first = inc.next_seq
                inc.next_seq += 1
            seq, source = first, "observed"
        if not replayed:
            inc.remember(inc.seen, event_id, seq, self.max_tracked_event_ids)
        extra: dict[str, Any] = {
            ATTR_SSE_EVENT_SEQ: seq,
            ATTR_SSE_EVENT_SEQ_SOURCE: source,
            ATTR_SSE_REPLAYED: replayed,
        }
        stream = inc.stored.get(event_id)
        if stream is not None:
            extra[ATTR_SSE_STREAM_ID] = cut(stream)
        ev = BufferedEvent(time.time_ns(), event_id, data, ex.context, extra)
        answers = False
        if inc.awaiting:
            msgs = parse_messages(data)
            # Answered: no longer awaiting, so a cancel racing the answer is not settled as cancelled.
            answers = (
                bool(msgs)
                and msgs[0].kind in ("response", "error")
                and inc.awaiting.pop(msgs[0].id or "", None) is not None
            )
        if inc.live or self.request_span_delay_ms == 0:
            self._emit_event(inc, ev)
            return
        self.rings.add(inc, ev)
        if answers:
            self.rings.emit_all(inc, lambda e: self._emit_event(inc, e))

    def _emit_event(self: ServerInstrumentation, inc: Incarnation, ev: BufferedEvent) -> None:
        a = self.emitter.common(inc.session_id, inc.id, inc.source, inc.protocol_version)
        a[ATTR_SSE_EVENT_ID] = cut(ev.event_id)
        a.update(ev.extra)
        a[ATTR_SSE_PAYLOAD_DIGEST] = payload_digest(ev.data)
        a[ATTR_SSE_PAYLOAD_BYTES] = len(ev.data.encode("utf-8", "surrogatepass"))
        msgs = parse_messages(ev.data)
        if msgs:
            m = msgs[0]
            a[ATTR_JSONRPC_KIND] = m.kind
            if m.id is not None:
                a[ATTR_JSONRPC_REQUEST_ID] = m.id
            if m.method is not None:
                a[ATTR_MCP_METHOD_NAME] = m.method
            if m.progress_token is not None and m.method == "notifications/progress":
                a[ATTR_PROGRESS_TOKEN] = m.progress_token
        else:
            a[ATTR_JSONRPC_KIND] = "none"
        self.emitter.emit(SPAN_SSE_EVENT, a, start_ns=ev.time_ns, end_ns=ev.time_ns, context=ev.context)
