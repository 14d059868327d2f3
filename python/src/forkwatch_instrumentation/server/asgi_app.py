"""Observing the session managers an ASGI app makes in its lifespan (FastMCP 4.x's `http_app()`).

FastMCP 4.x builds a new `FastMCPStreamableHTTPSessionManager` (a `StreamableHTTPSessionManager`
subclass) inside the Starlette app's lifespan, on every lifespan cycle, and keeps it on the route's
endpoint (`StreamableHTTPASGIApp.session_manager`). There is no manager to hand to `observe_manager`
before the app starts, so the lifespan is wrapped: once the app's own lifespan has made and started
its managers, and before the server accepts a request, every one reachable from the routes is observed.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING, Any

from forkwatch_instrumentation.emitter import logger

if TYPE_CHECKING:
    from forkwatch_instrumentation.server.instrumentation import ServerInstrumentation

_MAX_DEPTH = 8


def _is_manager(obj: Any) -> bool:
    # Duck-typed (no import of `mcp` here): what `observe_manager` replaces must be there.
    return hasattr(obj, "_handle_stateful_request") and isinstance(getattr(obj, "_server_instances", None), dict)


def managers_of(app: Any, depth: int = 0) -> Iterator[Any]:
    """Stateful session managers reachable from an app's routes: a route's endpoint or app holding one
    as `session_manager` (FastMCP's and the SDK's `StreamableHTTPASGIApp`), mounts followed."""
    if depth > _MAX_DEPTH:
        return
    for route in getattr(app, "routes", None) or ():
        for part in (getattr(route, "endpoint", None), getattr(route, "app", None)):
            manager = getattr(part, "session_manager", None)
            if _is_manager(manager) and not getattr(manager, "stateless", False):
                yield manager
        if getattr(route, "routes", None):
            yield from managers_of(route, depth + 1)


def observe_app(inst: ServerInstrumentation, app: Any) -> Any:
    """Wraps `app.router.lifespan_context` (Starlette) so that the managers the app's lifespan makes
    are observed as it starts. Returns the app; an app without a router is left as it is."""
    try:
        router = getattr(app, "router", None)
        original: Callable[[Any], Any] | None = getattr(router, "lifespan_context", None)
        if router is None or original is None or getattr(original, "_forkwatch_observed", None) is inst:
            return app

        @contextlib.asynccontextmanager
        async def lifespan(started: Any) -> AsyncIterator[Any]:
            try:
                async with original(started) as state:
                    try:
                        for manager in managers_of(app):
                            inst.observe_manager(manager)
                    except Exception:
                        logger.debug("forkwatch: app's managers not observed", exc_info=True)
                    yield state
            finally:
                # The managers were observed running: their own `run` was entered before we could wrap it.
                inst.stopped()

        lifespan._forkwatch_observed = inst  # type: ignore[attr-defined]
        router.lifespan_context = lifespan
    except Exception:
        logger.debug("forkwatch: app not observed", exc_info=True)
    return app


@contextlib.asynccontextmanager
async def stopped_flushes(inst: ServerInstrumentation, running: Any) -> AsyncIterator[Any]:
    """A manager's `run()` context that tells `inst` when it has stopped (its sessions ended, each
    span emitted), so their spans are flushed before a signal ends the process."""
    try:
        async with running as value:
            yield value
    finally:
        inst.stopped()
