"""`connect_guarded`: a `ClientSession` over Streamable HTTP with the guard (and optionally the
instrumentation) wired in the right order."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx2

from forkwatch_instrumentation.guard.client_guard import ClientGuard
from forkwatch_instrumentation.guard.session_fork_error import SessionForkError

if TYPE_CHECKING:
    from mcp import ClientSession

    from forkwatch_instrumentation.client.instrumentation import ClientInstrumentation


@dataclass
class GuardedClient:
    """An initialized `session` and its `guard`; `call_tool` raises `SessionForkError` on a fork."""

    session: ClientSession
    guard: ClientGuard

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        """`session.call_tool(...)`, failed at once with `SessionForkError` when the session forks
        (no retry: re-connect to decide whether a non-idempotent call may run again)."""
        return await self.guard.guarded(self.session.call_tool(name, arguments, **kwargs))

    @property
    def session_key(self) -> str | None:
        return self.guard.session_key

    @property
    def incarnation(self) -> str | None:
        return self.guard.session.incarnation if self.guard.session is not None else None


def _only_fork(err: BaseException) -> SessionForkError | None:
    """The SessionForkError an (anyio) exception group carries, when it carries nothing else."""
    if isinstance(err, SessionForkError):
        return err
    inner = getattr(err, "exceptions", None)  # a (Base)ExceptionGroup, also anyio's on Python 3.10
    if isinstance(inner, (list, tuple)) and len(inner) == 1 and isinstance(inner[0], BaseException):
        return _only_fork(inner[0])
    return None


@asynccontextmanager
async def connect_guarded(
    url: str,
    *,
    guard: ClientGuard | None = None,
    instrumentation: ClientInstrumentation | None = None,
    transport: httpx2.AsyncBaseTransport | None = None,
    **session_kwargs: Any,
) -> AsyncIterator[GuardedClient]:
    """Connects, initializes and yields a `GuardedClient`. The wire is `guard -> instrumentation ->
    transport` (default: a plain `httpx2.AsyncHTTPTransport`), the read stream `instrumentation ->
    guard -> SDK`, so the instrumentation sees what crossed the wire and what the guard dropped.
    A fork leaves the block as the bare `SessionForkError` (not wrapped in the task groups' group).
    `session_kwargs` go to `ClientSession` (e.g. `client_info`)."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    g = guard if guard is not None else ClientGuard()
    inner = transport
    if instrumentation is not None:
        inner = instrumentation.wrap_transport(inner)
    http = g.http_client(inner)
    try:
        async with http, streamable_http_client(url, http_client=http) as (read, write):
            read = g.attach(read)
            if instrumentation is not None:
                read = instrumentation.attach(read)
            async with ClientSession(read, write, **session_kwargs) as session:
                await g.guarded(session.initialize())
                yield GuardedClient(session, g)
    except BaseException as err:
        fork = _only_fork(err)
        if fork is not None and fork is not err:
            raise fork from None
        raise
