"""The guard's read-stream wrapper: delivers what the SDK's transport yields, and on a fork an error
answer for every request still pending, at once."""

from __future__ import annotations

from collections import deque
from typing import Any

import anyio


class GuardedReadStream:
    """Wraps the read stream `streamable_http_client` yields, before `ClientSession`."""

    def __init__(self, inner: Any, on_item: Any) -> None:
        self._inner = inner
        self._on_item = on_item
        self._injected: deque[Any] = deque()
        self._waiting: anyio.CancelScope | None = None

    def inject(self, items: list[Any]) -> None:
        """Deliver `items` before anything else the transport yields; wakes a waiting receive."""
        self._injected.extend(items)
        if self._waiting is not None:
            self._waiting.cancel()

    async def receive(self) -> Any:
        while True:
            if self._injected:
                return self._injected.popleft()
            with anyio.CancelScope() as scope:
                self._waiting = scope
                try:
                    item = await self._inner.receive()
                finally:
                    self._waiting = None
                self._on_item(item)
                return item
            # cancelled by `inject`: deliver what was injected

    def __aiter__(self) -> GuardedReadStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def __aenter__(self) -> GuardedReadStream:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
