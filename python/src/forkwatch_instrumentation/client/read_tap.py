"""What reaches the SDK: a wrapper of the read stream `streamable_http_client` yields."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from forkwatch_instrumentation.emitter import logger

if TYPE_CHECKING:
    from forkwatch_instrumentation.client.instrumentation import ClientInstrumentation


class ObservedReadStream:
    """Passes every item through unchanged; tells the instrumentation which messages were delivered."""

    def __init__(self, inst: ClientInstrumentation, inner: Any) -> None:
        self._inst = inst
        self._inner = inner

    def _seen(self, item: Any) -> None:
        try:
            message = getattr(item, "message", None)
            if message is not None and hasattr(message, "model_dump"):
                self._inst.delivered(message.model_dump(by_alias=True, mode="json", exclude_unset=True))
        except Exception:
            logger.debug("forkwatch: delivery not recorded", exc_info=True)

    async def receive(self) -> Any:
        item = await self._inner.receive()
        self._seen(item)
        return item

    def __aiter__(self) -> ObservedReadStream:
        return self

    async def __anext__(self) -> Any:
        item = await self._inner.__anext__()
        self._seen(item)
        return item

    async def __aenter__(self) -> ObservedReadStream:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
