"""MCP apps the tests serve: the seed's slow tool on MCPServer, sound or naive (rehydrating)."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import anyio
from counter_event_store import CounterEventStore
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from rehydrating_manager import RehydratingSessionManager
from starlette.applications import Starlette
from starlette.routing import Route


def seed_server(steps: int = 3, step_ms: float = 20) -> MCPServer:
    server = MCPServer("forkwatch-python-test")

    @server.tool()
    async def slow_report(topic: str, ctx: Context) -> str:
        """Reports on `topic` slowly, with progress notifications."""
        for i in range(steps):
            await ctx.report_progress(i + 1, steps, f"step {i + 1}")
            await asyncio.sleep(step_ms / 1000)
        return f"report on {topic}: python"

    return server


def cancellable_server(cleanup_ms: float = 1000) -> MCPServer:
    """`slow_report` reports progress once, then works for 5 s; cancelled, it cleans up for
    `cleanup_ms` (shielded) before the SDK answers the cancelled request (`-32800`, 2025 wire)."""
    server = MCPServer("forkwatch-python-test")

    @server.tool()
    async def slow_report(topic: str, ctx: Context) -> str:
        """Reports on `topic` slowly, with one progress notification."""
        await ctx.report_progress(1, 2, "step 1")
        try:
            await asyncio.sleep(5)
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.sleep(cleanup_ms / 1000)
        return f"report on {topic}: python"

    return server


def sound_app(server: MCPServer, idle_timeout_s: float = 30.0) -> tuple[Any, Any]:
    """The SDK's own manager (404 on an unknown session) with a process-wide counter store."""
    app = server.streamable_http_app(event_store=CounterEventStore(), session_idle_timeout=idle_timeout_s)
    return app, server.session_manager


def naive_app(server: MCPServer, idle_timeout_s: float = 30.0) -> tuple[Any, Any]:
    """The seed's fork: a manager that rehydrates unknown ids with a fresh `e1..` log per session."""
    server.streamable_http_app(event_store=CounterEventStore(itertools.count(1)))
    manager = RehydratingSessionManager(
        app=server.session_manager.app,
        session_idle_timeout=idle_timeout_s,
        security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    app = Starlette(routes=[Route("/mcp", endpoint=StreamableHTTPASGIApp(manager))], lifespan=lambda _: manager.run())
    return app, manager


def guarded_app(server: MCPServer, idle_timeout_s: float = 30.0, **guard_opts: Any) -> tuple[Any, Any]:
    """The guarded server side: GuardedSessionManager (404 unknown, 409 log gap, incarnations)."""
    from forkwatch_instrumentation.guard import GuardedSessionManager

    server.streamable_http_app()
    manager = GuardedSessionManager(
        server.session_manager.app,
        session_idle_timeout=idle_timeout_s,
        security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        **guard_opts,
    )
    app = Starlette(routes=[Route("/mcp", endpoint=StreamableHTTPASGIApp(manager))], lifespan=lambda _: manager.run())
    return app, manager
