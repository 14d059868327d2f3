"""Cost of the instrumentation per tool call, side by side in one process: the same MCPServer app and
SDK client over real HTTP (uvicorn on an ephemeral port), without and with forkwatch on both sides
(an SDK TracerProvider with an in-memory exporter, default options). Rounds alternate to share noise.

    python bench/overhead.py [--calls 300] [--rounds 3]
"""

from __future__ import annotations

import argparse
import socket
import statistics
import threading
import time

import anyio
import httpx2
import uvicorn
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.server.mcpserver import MCPServer
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from forkwatch_instrumentation import ServerInstrumentation
from forkwatch_instrumentation.client import ClientInstrumentation


def serve(instrumented: bool, provider: TracerProvider) -> tuple[uvicorn.Server, threading.Thread, str]:
    server = MCPServer("bench")

    @server.tool()
    async def echo(text: str) -> str:
        """Echoes."""
        return text

    app = server.streamable_http_app()
    if instrumented:
        ServerInstrumentation(tracer_provider=provider).observe_manager(server.session_manager)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    srv = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    t = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    t.start()
    while not srv.started:
        time.sleep(0.01)
    return srv, t, f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"


async def calls(url: str, n: int, ci: ClientInstrumentation | None) -> float:
    transport = ci.wrap_transport() if ci else httpx2.AsyncHTTPTransport()
    async with httpx2.AsyncClient(transport=transport, timeout=30) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(ci.attach(read) if ci else read, write) as s:
                await s.initialize()
                for _ in range(20):  # warm-up
                    await s.call_tool("echo", {"text": "x"})
                t0 = time.perf_counter()
                for _ in range(n):
                    await s.call_tool("echo", {"text": "x"})
                return (time.perf_counter() - t0) / n * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    res: dict[str, list[float]] = {"off": [], "on": []}
    spans_per_call: list[float] = []
    for _ in range(a.rounds):
        for mode in ("off", "on"):
            exporter = InMemorySpanExporter()
            provider = TracerProvider()
            provider.add_span_processor(SimpleSpanProcessor(exporter))
            srv, t, url = serve(mode == "on", provider)
            ci = ClientInstrumentation(tracer_provider=provider) if mode == "on" else None
            res[mode].append(anyio.run(calls, url, a.calls, ci))
            if mode == "on":
                spans_per_call.append(len(exporter.get_finished_spans()) / (a.calls + 20))
            srv.should_exit = True
            t.join(10)
    off, on = statistics.median(res["off"]), statistics.median(res["on"])
    print(f"calls/round {a.calls}, rounds {a.rounds}")
    print(
        f"ms per tool call, median of rounds: without {off:.3f}, with forkwatch (both sides) {on:.3f}, "
        f"ratio {on / off:.3f}"
    )
    print(f"forkwatch spans per call (healthy session, default delay): {statistics.median(spans_per_call):.3f}")


if __name__ == "__main__":
    main()
