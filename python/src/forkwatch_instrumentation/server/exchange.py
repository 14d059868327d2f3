"""One HTTP exchange on an observed transport: what the ASGI receive/send calls tell, passed through unchanged."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from opentelemetry import context as otel_context
from opentelemetry import propagate
from opentelemetry.context import Context

from forkwatch_instrumentation.emitter import logger
from forkwatch_instrumentation.jsonrpc import cancelled_request_id, parse_messages
from forkwatch_instrumentation.semconv import (
    ATTR_GEN_AI_TOOL_NAME,
    ATTR_JSONRPC_REQUEST_ID,
    ATTR_MCP_METHOD_NAME,
    ATTR_PROGRESS_TOKEN,
)
from forkwatch_instrumentation.sse import SseParser

if TYPE_CHECKING:
    from forkwatch_instrumentation.server.instrumentation import ServerInstrumentation
    from forkwatch_instrumentation.server.state import Incarnation


def header(scope: Any, name: str) -> str | None:
    """A request header of an ASGI scope (`name` lowercase), or None."""
    key = name.encode("ascii")
    for k, v in scope.get("headers", ()):
        if k.lower() == key:
            return bytes(v).decode("latin-1")
    return None


def trace_context(scope: Any, meta: Any = None) -> Context | None:
    """The request's trace context: `params._meta` when it carries one, else the HTTP header, else the
    active context (None: let the tracer take it)."""
    try:
        if isinstance(meta, dict) and isinstance(meta.get("traceparent"), str):
            return propagate.extract({k: v for k, v in meta.items() if isinstance(v, str)})
        tp = header(scope, "traceparent")
        if tp is not None:
            carrier = {"traceparent": tp}
            ts = header(scope, "tracestate")
            if ts is not None:
                carrier["tracestate"] = ts
            return propagate.extract(carrier, context=otel_context.get_current())
    except Exception:
        logger.debug("forkwatch: trace context not read", exc_info=True)
    return None


class Exchange:
    """Taps one request/response of a transport. Every hook catches its own errors: the host's bytes
    pass unchanged whatever happens here."""

    def __init__(self, inst: ServerInstrumentation, inc: Incarnation, scope: Any) -> None:
        self.inst = inst
        self.inc = inc
        self.method: str = scope.get("method", "GET")
        self.scope = scope
        self.presented_sid = header(scope, "mcp-session-id")
        self.last_event_id = header(scope, "last-event-id")
        self.protocol_version = header(scope, "mcp-protocol-version") or inc.protocol_version
        if self.protocol_version and inc.protocol_version is None:
            inc.protocol_version = self.protocol_version
        self.context = trace_context(scope)
        self.created_here = False
        self._body = bytearray()
        self._body_over = False
        self._sse: SseParser | None = None
        self._json: bytearray | None = None
        if self.method == "DELETE":
            inc.deleting = True
        if not inc.created and self.method != "POST":
            inst.created(inc, self, self.method if self.method in ("GET", "DELETE") else "unknown")

    # ---- request ----------------------------------------------------------------------------------

    def wrap_receive(self, receive: Any) -> Any:
        if self.method != "POST":
            return receive

        async def rx() -> Any:
            message = await receive()
            try:
                self._on_receive(message)
            except Exception:
                logger.debug("forkwatch: request body not read", exc_info=True)
            return message

        return rx

    def _on_receive(self, message: Any) -> None:
        if message.get("type") != "http.request" or self._body is None:
            return
        chunk = message.get("body", b"")
        if not self._body_over:
            if len(self._body) + len(chunk) > self.inst.max_body_bytes:
                self._body_over = True
                self._body = bytearray()
            else:
                self._body += chunk
        if not message.get("more_body", False):
            body, self._body = bytes(self._body), None  # type: ignore[assignment]
            self._on_body(body.decode("utf-8", "replace") if not self._body_over else "")

    def _on_body(self, text: str) -> None:
        msgs = parse_messages(text)
        inc = self.inc
        if not inc.created:
            first = next((m.method for m in msgs if m.kind == "request" and m.method), None)
            if first == "initialize":
                params = msgs[0].params
                pv = params.get("protocolVersion") if isinstance(params, dict) else None
                if isinstance(pv, str) and self.protocol_version is None:
                    self.protocol_version = inc.protocol_version = pv[:256]
            self.inst.created(inc, self, first or "unknown")
        for m in msgs:
            if m.kind == "notification" and m.method == "notifications/cancelled":
                rid = cancelled_request_id(m.params)
                if rid is not None:
                    self.inst.cancelled(inc, rid)
                continue
            if m.kind != "request" or m.id is None or m.method is None:
                continue
            attrs: dict[str, Any] = {ATTR_MCP_METHOD_NAME: m.method, ATTR_JSONRPC_REQUEST_ID: m.id}
            if m.progress_token is not None:
                attrs[ATTR_PROGRESS_TOKEN] = m.progress_token
            if m.tool_name is not None:
                attrs[ATTR_GEN_AI_TOOL_NAME] = m.tool_name
            ctx = trace_context(self.scope, m.meta) if isinstance(m.meta, dict) else self.context
            self.inst.request_read(inc, self, attrs, ctx, m.id, m.method)

    # ---- response ---------------------------------------------------------------------------------

    def wrap_send(self, send: Any) -> Any:
        async def tx(message: Any) -> None:
            try:
                self._on_send(message)
            except Exception:
                logger.debug("forkwatch: response not read", exc_info=True)
            await send(message)

        return tx

    def _on_send(self, message: Any) -> None:
        kind = message.get("type")
        if kind == "http.response.start":
            self._on_start(int(message.get("status", 0)), message.get("headers", ()))
        elif kind == "http.response.body":
            chunk = message.get("body", b"")
            if self._sse is not None and chunk:
                for ev in self._sse.feed(chunk):
                    self._on_event(ev.id, ev.data, ev.oversized)
            elif self._json is not None:
                if len(self._json) + len(chunk) <= self.inst.max_body_bytes:
                    self._json += chunk
                if not message.get("more_body", False):
                    for m in parse_messages(bytes(self._json).decode("utf-8", "replace")):
                        if m.kind in ("response", "error") and m.id is not None:
                            self.inst.response_seen(self.inc, m.id)
                            self.inc.awaiting.pop(m.id, None)
                    self._json = None

    def _on_start(self, status: int, headers: Any) -> None:
        inc = self.inc
        if not inc.created:
            self.inst.created(inc, self, "unknown")
        ctype = ""
        answered_sid: str | None = None
        for k, v in headers:
            name = bytes(k).lower()
            if name == b"content-type":
                ctype = bytes(v).decode("latin-1").lower()
            elif name == b"mcp-session-id":
                answered_sid = bytes(v).decode("latin-1")
        if ctype.startswith("text/event-stream"):
            self._sse = SseParser(self.inst.max_sse_event_chars)
        elif ctype.startswith("application/json"):
            self._json = bytearray()
        if self.last_event_id is not None:
            self.inst.resume_answered(inc, self, status)
        elif self.presented_sid is not None and answered_sid is not None and answered_sid != self.presented_sid:
            self.inst.answered_elsewhere(self.presented_sid, inc)

    def _on_event(self, event_id: str | None, data: str, oversized: bool) -> None:
        if not oversized and data:
            for m in parse_messages(data):
                if m.kind in ("response", "error") and m.id is not None:
                    self.inst.response_seen(self.inc, m.id)
        if event_id is None or oversized:
            return
        self.inst.event_sent(self.inc, self, event_id, data)
