"""Shared fixtures: an in-memory span exporter, a real uvicorn server on an ephemeral port, the repo's
Python fixtures (test/fixtures/python) on the path."""

from __future__ import annotations

import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

FIXTURES = Path(__file__).resolve().parents[2] / "test" / "fixtures" / "python"
sys.path.insert(0, str(FIXTURES))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Spans:
    """Spans exported so far, with bounded polling for a condition (no sleeps as synchronisation)."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))

    def all(self, name: str | None = None, side: str | None = None) -> list[ReadableSpan]:
        out = list(self.exporter.get_finished_spans())
        if name is not None:
            out = [s for s in out if s.name == name]
        if side is not None:
            out = [s for s in out if (s.attributes or {}).get("forkwatch.side") == side]
        return out

    def attrs(self, name: str, side: str | None = None) -> list[dict[str, Any]]:
        return [dict(s.attributes or {}) for s in self.all(name, side)]

    def wait(self, cond: Callable[[], bool], timeout_s: float = 10.0) -> None:
        deadline = time.monotonic() + timeout_s
        while not cond():
            if time.monotonic() > deadline:
                names = [(s.name, dict(s.attributes or {})) for s in self.all()]
                raise AssertionError(f"condition not met within {timeout_s}s; spans: {names}")
            time.sleep(0.02)


@pytest.fixture
def spans() -> Spans:
    return Spans()


class Served:
    def __init__(self, app: Any) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]}, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 15
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("server did not start")
            time.sleep(0.02)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(15)


@pytest.fixture
def serve() -> Iterator[Callable[[Any], Served]]:
    started: list[Served] = []

    def start(app: Any) -> Served:
        s = Served(app)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()
