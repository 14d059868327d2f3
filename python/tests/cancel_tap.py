"""An HTTP tap under the SDK client that says when the server answered the client's
`notifications/cancelled` POST: the server reads a POST's body before answering it, so from then on
its instrumentation has seen the cancel (no sleeps as synchronisation)."""

from __future__ import annotations

import anyio
import httpx2


class CancelTap(httpx2.AsyncBaseTransport):
    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self._inner = inner
        self.cancel_answered = anyio.Event()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        cancel = request.method == "POST" and b"notifications/cancelled" in await request.aread()
        response = await self._inner.handle_async_request(request)
        if cancel:
            self.cancel_answered.set()
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()
