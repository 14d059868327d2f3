"""Zero-code client patch: `mcp.client.streamable_http.streamable_http_client` gets an observed http client."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator, Callable
from typing import Any

from forkwatch_instrumentation.client.instrumentation import ClientInstrumentation


def patch_client(provider: Any, options: dict[str, Any]) -> Callable[[], None]:
    """Replace `streamable_http_client` in `mcp.client.streamable_http` (and `mcp.client`'s re-exports
    looked up later) by one whose http client taps the wire and whose read stream is attached.
    Returns the undo."""
    import mcp.client.streamable_http as mod

    inst = ClientInstrumentation(tracer_provider=provider, **options)
    original = mod.streamable_http_client

    @contextlib.asynccontextmanager
    @functools.wraps(original)
    async def streamable_http_client(url: str, *args: Any, http_client: Any = None, **kw: Any) -> AsyncIterator[Any]:
        owned = http_client is None
        client = inst.http_client() if owned else http_client
        if not owned:
            client._transport = inst.wrap_transport(client._transport)
        async with contextlib.AsyncExitStack() as stack:
            if owned:
                await stack.enter_async_context(client)
            async with original(url, *args, http_client=client, **kw) as streams:
                read, write = streams[0], streams[1]
                yield (inst.attach(read), write, *streams[2:])

    mod.streamable_http_client = streamable_http_client  # type: ignore[assignment]

    def undo() -> None:
        mod.streamable_http_client = original  # type: ignore[assignment]
        inst.flush()

    return undo
