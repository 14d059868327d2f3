"""A served app for test_shutdown_flush.py, in its own process as deployed: the seed's slow tool behind
a rehydrating manager (`--observe manager`) or a FastMCP-style app observed by its lifespan
(`--observe app`), spans batched for a minute (a flush is the only way out) into a JSON-lines file.
Prints `listening <port>`; SIGTERM stops it as an orchestrator does (uvicorn re-raises the signal)."""

from __future__ import annotations

import argparse
import socket
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "test" / "fixtures" / "python"))

import uvicorn
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from apps import naive_app, seed_server, sound_app
from forkwatch_instrumentation import ServerInstrumentation
from otlp_json import otlp_json_line


class FileExporter(SpanExporter):
    def __init__(self, path: str) -> None:
        self.path = path

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(otlp_json_line(spans) + "\n")
        return SpanExportResult.SUCCESS


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--observe", choices=["manager", "app"], required=True)
    p.add_argument("--spans", required=True)
    p.add_argument("--flush-ms", type=int, default=None)
    args = p.parse_args()
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(FileExporter(args.spans), schedule_delay_millis=60_000))
    inst = ServerInstrumentation(tracer_provider=provider, salt="s", shutdown_flush_timeout_ms=args.flush_ms)
    server = seed_server(steps=200, step_ms=50)
    if args.observe == "manager":
        app, manager = naive_app(server)
        inst.observe_manager(manager)
    else:
        app, _ = sound_app(server)
        inst.observe_app(app)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    print(f"listening {sock.getsockname()[1]}", flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=1)).run(
        sockets=[sock]
    )


if __name__ == "__main__":
    main()
