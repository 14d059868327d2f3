"""The corpus's `python` path: the seed's Python `mcp` server with forkwatch_instrumentation's server
instrumentation in the process, spans sent as OTLP/HTTP JSON to the corpus's capture sink.

`--manager naive` is test/fixtures/python/seed_server.py's `--naive` app (RehydratingSessionManager:
an unknown session id is rehydrated, printed `rehydrated <id>`); `--manager guarded` is the package's
guarded server side (GuardedSessionManager: 404 on an unknown id, 409 on a cursor not in the log,
incarnations). Prints `listening <port>` and `reaped <id>` as seed_server.py does, which the
corpus's labels and timers read (the server's own account, never forkwatch's spans).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import sys
import urllib.request
from collections.abc import Sequence
from pathlib import Path

# The rehydrating manager and its counter store are the fixtures the proxy/python path serves.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "test" / "fixtures" / "python"))

import uvicorn  # noqa: E402
from fixture_server import print_reaps
from forkwatch_instrumentation import ServerInstrumentation  # noqa: E402
from google.protobuf.json_format import MessageToDict  # noqa: E402
from mcp.server.mcpserver import Context, MCPServer  # noqa: E402
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp  # noqa: E402
from mcp.server.transport_security import TransportSecuritySettings  # noqa: E402
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult  # noqa: E402
from rehydrating_manager import RehydratingSessionManager  # noqa: E402
from starlette.applications import Starlette  # noqa: E402
from starlette.routing import Route  # noqa: E402


class JsonSpanExporter(SpanExporter):
    """OTLP/HTTP JSON: the capture sink keeps JSON lines only (what `forkwatch analyze` reads), and the
    Python SDK's OTLP exporter speaks protobuf."""

    def __init__(self, url: str) -> None:
        self.url = url

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        body = json.dumps(MessageToDict(encode_spans(spans), use_integers_for_enums=True)).encode()
        req = urllib.request.Request(self.url, data=body, headers={"content-type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as res:
                res.read()
            return SpanExportResult.SUCCESS
        except Exception as err:  # a lost export shows as a mismatch, so say so on the log
            print(f"export failed: {err}", flush=True)
            return SpanExportResult.FAILURE

    def shutdown(self) -> None:
        pass


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--manager", choices=("naive", "guarded"), required=True)
    ap.add_argument("--idle-timeout-s", type=float, default=1.0)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--step-ms", type=float, default=30)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--otlp-url", required=True, help="OTLP/HTTP base URL; spans go to <url>/v1/traces as JSON")
    ap.add_argument("--service", required=True, help="service.name of the spans")
    ap.add_argument("--salt", default="")
    args = ap.parse_args()

    server = MCPServer("forkwatch-python-seed")

    @server.tool()
    async def slow_report(topic: str, ctx: Context) -> str:
        """Reports on `topic` slowly, with progress notifications."""
        for i in range(args.steps):
            await ctx.report_progress(i + 1, args.steps, f"step {i + 1}")
            await asyncio.sleep(args.step_ms / 1000)
        return f"report on {topic}: python"

    print_reaps()
    server.streamable_http_app()
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*"],
    )
    if args.manager == "naive":
        manager = RehydratingSessionManager(app=server.session_manager.app, session_idle_timeout=args.idle_timeout_s, security_settings=security)
    else:
        from forkwatch_instrumentation.guard import GuardedSessionManager

        manager = GuardedSessionManager(server.session_manager.app, session_idle_timeout=args.idle_timeout_s, security_settings=security)
    app = Starlette(routes=[Route("/mcp", endpoint=StreamableHTTPASGIApp(manager))], lifespan=lambda _: manager.run())

    provider = TracerProvider(resource=Resource.create({"service.name": args.service}))
    # As the TypeScript apps' exporters in the corpus: batched, sent within 100 ms.
    provider.add_span_processor(BatchSpanProcessor(JsonSpanExporter(f"{args.otlp_url}/v1/traces"), schedule_delay_millis=100))
    inst = ServerInstrumentation(tracer_provider=provider, salt=args.salt)
    inst.observe_manager(manager)

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(128)
    print(f"listening {sock.getsockname()[1]}", flush=True)
    # Open SSE streams would hold a graceful shutdown to the corpus's SIGKILL. The spans of the
    # shutdown (sessions ended) are flushed by the instrumentation when the manager stops: uvicorn
    # re-raises SIGTERM after serving, so the `finally` below runs only when it returns otherwise.
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=1)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        inst.flush()
        provider.force_flush()
        provider.shutdown()


if __name__ == "__main__":
    sys.exit(main())
