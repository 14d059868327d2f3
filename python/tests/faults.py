"""Network faults under the client's wire tap: a partition that cuts one response stream mid-way."""

from __future__ import annotations

import time
from typing import Any

import httpx2


class _CutStream(httpx2.AsyncByteStream):
    def __init__(self, inner: Any, after_events: int, owner: PartitionTransport) -> None:
        self._inner = inner
        self._left = after_events
        self._owner = owner

    async def __aiter__(self) -> Any:
        buf = b""
        async for chunk in self._inner:
            buf += chunk
            yield chunk
            if buf.count(b"\ndata: {") + buf.count(b"\r\ndata: {") >= self._left:
                self._owner.cut_at = time.monotonic()
                raise httpx2.ReadError("partition (test)")

    async def aclose(self) -> None:
        await self._inner.aclose()


class PartitionTransport(httpx2.AsyncBaseTransport):
    """Cuts the SSE answer of the first POST whose body contains `marker` after `after_events` events
    with a JSON payload, as a network partition would, and refuses connections for `hold_s` after it.
    The standalone GET stream (no `Last-Event-ID`) is answered `405` here, as a middlebox that does not
    pass it would: only the POST holds the session open on the server, so its idle reaper can run."""

    def __init__(self, marker: bytes, after_events: int, hold_s: float = 0.7) -> None:
        self._inner = httpx2.AsyncHTTPTransport()
        self._marker = marker
        self._after = after_events
        self._hold_s = hold_s
        self.cut = False
        self.cut_at: float | None = None

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.method == "GET" and "last-event-id" not in request.headers:
            return httpx2.Response(405, request=request)
        if self.cut_at is not None and time.monotonic() - self.cut_at < self._hold_s:
            raise httpx2.ConnectError("partition (test)")
        response = await self._inner.handle_async_request(request)
        if self.cut or request.method != "POST" or self._marker not in request.content:
            return response
        if not response.headers.get("content-type", "").startswith("text/event-stream"):
            return response
        self.cut = True
        return httpx2.Response(
            response.status_code,
            headers=response.headers,
            stream=_CutStream(response.stream, self._after, self),
            request=request,
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()
