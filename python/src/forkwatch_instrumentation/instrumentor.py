"""`McpForkInstrumentor`: zero-code instrumentation through `opentelemetry-instrument` (entry point
`forkwatch_mcp` in the `opentelemetry_instrumentor` group) or explicit `McpForkInstrumentor().instrument()`.

Requires `opentelemetry-instrumentation` (the extra `instrumentor`); the explicit API does not.
"""

from __future__ import annotations

import functools
from collections.abc import Collection
from typing import Any

from opentelemetry.instrumentation.instrumentor import BaseInstrumentor  # type: ignore[attr-defined]

from forkwatch_instrumentation.emitter import logger
from forkwatch_instrumentation.server.instrumentation import ServerInstrumentation

_INSTRUMENTS = ("mcp >= 2.3, < 3",)


class McpForkInstrumentor(BaseInstrumentor):  # type: ignore[misc]
    """Patches `StreamableHTTPSessionManager.__init__` so every manager (the low-level `Server`'s,
    `MCPServer.streamable_http_app()`'s, a subclass's) is observed as by `observe_manager`, and
    `streamable_http_client` so every client is observed as by `ClientInstrumentation.wrap`.

    kwargs of `instrument()`: `tracer_provider` (default global), `server` / `client` (default True),
    `server_options` / `client_options` (the constructors' keyword options). Salt, raw ids and the request
    delay come from `FORKWATCH_SESSION_SALT`, `FORKWATCH_RECORD_RAW_SESSION_ID`,
    `FORKWATCH_REQUEST_SPAN_DELAY_MS` unless given in the options.
    """

    server_instrumentation: ServerInstrumentation | None = None

    def instrumentation_dependencies(self) -> Collection[str]:
        return _INSTRUMENTS

    def _instrument(self, **kwargs: Any) -> None:
        provider = kwargs.get("tracer_provider")
        if kwargs.get("server", True):
            try:
                self._patch_server(provider, dict(kwargs.get("server_options") or {}))
            except Exception:
                logger.warning("forkwatch: mcp server not instrumented", exc_info=True)
        if kwargs.get("client", True):
            try:
                from forkwatch_instrumentation.client.patch import patch_client

                self._unpatch_client = patch_client(provider, dict(kwargs.get("client_options") or {}))
            except Exception:
                logger.warning("forkwatch: mcp client not instrumented", exc_info=True)

    def _patch_server(self, provider: Any, options: dict[str, Any]) -> None:
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        inst = ServerInstrumentation(tracer_provider=provider, **options)
        self.server_instrumentation = inst
        original = StreamableHTTPSessionManager.__init__

        @functools.wraps(original)
        def init(manager: Any, *args: Any, **kw: Any) -> None:
            original(manager, *args, **kw)
            if not getattr(manager, "stateless", False):
                inst.observe_manager(manager)

        init.__forkwatch_original__ = original  # type: ignore[attr-defined]
        StreamableHTTPSessionManager.__init__ = init  # type: ignore[method-assign]

    def _uninstrument(self, **kwargs: Any) -> None:
        try:
            from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

            original = getattr(StreamableHTTPSessionManager.__init__, "__forkwatch_original__", None)
            if original is not None:
                StreamableHTTPSessionManager.__init__ = original  # type: ignore[method-assign]
            if self.server_instrumentation is not None:
                self.server_instrumentation.flush()
                self.server_instrumentation.enabled = False
        except Exception:
            logger.debug("forkwatch: uninstrument", exc_info=True)
        unpatch = getattr(self, "_unpatch_client", None)
        if unpatch is not None:
            unpatch()
