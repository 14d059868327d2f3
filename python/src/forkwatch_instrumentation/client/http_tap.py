"""The client's wire tap: an `httpx2.AsyncBaseTransport` wrapper, the Python counterpart of `wrapFetch`."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import httpx2
from opentelemetry import propagate, trace

from forkwatch_instrumentation.emitter import logger
from forkwatch_instrumentation.jsonrpc import parse_messages
from forkwatch_instrumentation.sse import SseParser

if TYPE_CHECKING:
    from forkwatch_instrumentation.client.instrumentation import ClientInstrumentation


class ObservedHttpTransport(httpx2.AsyncBaseTransport):
    """Passes every request and response through unchanged; tells the instrumentation what crossed."""

    def __init__(self, inst: ClientInstrumentation, inner: httpx2.AsyncBaseTransport) -> None:
        self._inst = inst
        self._inner = inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        inst = self._inst
        ex: _ClientExchange | None = None
        try:
            if inst.enabled:
                ex = _ClientExchange(inst, request)
        except Exception:
            logger.debug("forkwatch: request not observed", exc_info=True)
        try:
            response = await self._inner.handle_async_request(request)
        except BaseException:
            if ex is not None:
                ex.failed()
            raise
        if ex is None:
            return response
        try:
            return ex.answered(response, request)
        except Exception:
            logger.debug("forkwatch: response not observed", exc_info=True)
            return response

    async def aclose(self) -> None:
        await self._inner.aclose()


class _ClientExchange:
    def __init__(self, inst: ClientInstrumentation, request: httpx2.Request) -> None:
        self.inst = inst
        self.method = request.method
        h = request.headers
        self.presented_sid: str | None = h.get("mcp-session-id")
        self.last_event_id: str | None = h.get("last-event-id")
        self.protocol_version: str | None = h.get("mcp-protocol-version")
        self.request_ids: list[str] = []
        self.stream_name = "get"
        if (
            inst.inject_trace_context
            and "traceparent" not in h
            and trace.get_current_span().get_span_context().is_valid
        ):
            carrier: dict[str, str] = {}
            propagate.inject(carrier)
            for k, v in carrier.items():
                request.headers[k] = v
        if self.method == "POST":
            try:
                body = request.content
            except httpx2.RequestNotRead:  # a streaming body: left alone
                body = b""
            if len(body) <= inst.max_parse_chars:
                msgs = parse_messages(body.decode("utf-8", "replace"))
                for m in msgs:
                    if m.kind == "request" and m.id is not None and m.method is not None:
                        self.request_ids.append(m.id)
                        inst.request_written(self, m)
                    elif m.kind == "notification" and m.method == "notifications/cancelled":
                        inst.cancel_written(self, m)
                if self.request_ids:
                    self.stream_name = f"post:{self.request_ids[0]}"
        elif self.last_event_id is not None and self.presented_sid is not None:
            self.stream_name = inst.stream_of(self.presented_sid, self.last_event_id)

    def failed(self) -> None:
        try:
            self.inst.exchange_failed(self, "transport_error")
        except Exception:
            logger.debug("forkwatch: failure not recorded", exc_info=True)

    def answered(self, response: httpx2.Response, request: httpx2.Request) -> httpx2.Response:
        h = response.headers
        self.status = response.status_code
        self.answered_sid: str | None = h.get("mcp-session-id")
        self.incarnation: str | None = h.get("mcp-session-incarnation")
        self.session_id = self.answered_sid or self.presented_sid
        self.inst.response_started(self)
        ctype = h.get("content-type", "").lower()
        if ctype.startswith("text/event-stream"):
            parser = SseParser(self.inst.max_event_chars)
            return _rewrap(response, request, _TapStream(response.stream, self, parser))
        if ctype.startswith("application/json") and self.method == "POST":
            return _rewrap(response, request, _TapStream(response.stream, self, None))
        return response

    def on_event(self, event_id: str | None, data: str, oversized: bool) -> None:
        if oversized:
            return
        self.inst.event_received(self, event_id, data)

    def on_json(self, body: bytes) -> None:
        try:
            v = json.loads(body.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            return
        for m in v if isinstance(v, list) else [v]:
            self.inst.json_answer(self, m)

    def ended(self, broken: bool) -> None:
        self.inst.stream_ended(self, broken)


class _TapStream(httpx2.AsyncByteStream):
    def __init__(self, inner: Any, ex: _ClientExchange, parser: SseParser | None) -> None:
        self._inner = inner
        self._ex = ex
        self._parser = parser
        self._json = bytearray() if parser is None else None
        self._done = False

    async def __aiter__(self) -> Any:
        broken = True
        try:
            async for chunk in self._inner:
                try:
                    self._feed(chunk)
                except Exception:
                    logger.debug("forkwatch: chunk not read", exc_info=True)
                yield chunk
            broken = False
        finally:
            self._finish(broken)

    def _feed(self, chunk: bytes) -> None:
        if self._parser is not None:
            for ev in self._parser.feed(chunk):
                self._ex.on_event(ev.id, ev.data, ev.oversized)
        elif self._json is not None:
            if len(self._json) + len(chunk) <= self._ex.inst.max_parse_chars:
                self._json += chunk

    def _finish(self, broken: bool) -> None:
        if self._done:
            return
        self._done = True
        try:
            if self._json is not None and not broken:
                self._ex.on_json(bytes(self._json))
            self._ex.ended(broken)
        except Exception:
            logger.debug("forkwatch: stream end not recorded", exc_info=True)

    async def aclose(self) -> None:
        self._finish(True)
        await self._inner.aclose()


def _rewrap(response: httpx2.Response, request: httpx2.Request, stream: httpx2.AsyncByteStream) -> httpx2.Response:
    return httpx2.Response(
        response.status_code,
        headers=response.headers,
        stream=stream,
        request=request,
        extensions=response.extensions,
    )
