"""Server instrumentation on the standalone `fastmcp` package (FastMCP 4.x): its `http_app()` makes a
`FastMCPStreamableHTTPSessionManager` inside the app's lifespan, so `observe_app` wraps the lifespan.
Real FastMCP, real uvicorn, real HTTP. Skipped where `fastmcp` is not installed."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import FIXTURES
from forkwatch_instrumentation import ServerInstrumentation, session_key
from raw_client import RawClient

fastmcp = pytest.importorskip(
    "fastmcp", reason="fastmcp (4.x) not installed: pinned in test/fixtures/python/requirements.txt"
)

from fastmcp.server.event_store import EventStore  # noqa: E402

SALT = "test-salt"


def fastmcp_app(idle_timeout_s: float = 30.0, steps: int = 3):
    mcp = fastmcp.FastMCP("forkwatch-fastmcp-test")

    @mcp.tool
    async def slow_report(topic: str, ctx: fastmcp.Context) -> str:
        """Reports on `topic` slowly, with progress notifications."""
        for i in range(steps):
            await ctx.report_progress(i + 1, steps, f"step {i + 1}")
            await asyncio.sleep(0.02)
        return f"report on {topic}: fastmcp"

    return mcp.http_app(path="/mcp", event_store=EventStore(), session_idle_timeout=idle_timeout_s)


def test_observe_app_sees_fastmcps_session_manager(spans, serve):
    inst = ServerInstrumentation(tracer_provider=spans.provider, salt=SALT, request_span_delay_ms=0)
    served = serve(inst.observe_app(fastmcp_app()))
    c = RawClient(served.url)
    c.initialize()
    ans = c.call_tool("slow_report", {"topic": "a"}, token="tok-1")
    sent = [eid for eid, _ in ans.events if eid]
    assert ans.status == 200 and sent
    spans.wait(lambda: len(spans.all("forkwatch.sse.event")) >= len(sent))
    [created] = spans.attrs("forkwatch.session.created")
    assert created["forkwatch.session.key"] == session_key(c.session_id or "", SALT)
    assert created["forkwatch.session.created_by"] == "initialize"
    progress = [e for e in spans.attrs("forkwatch.sse.event") if e.get("mcp.method.name") == "notifications/progress"]
    assert [p["forkwatch.progress.token"] for p in progress] == ["tok-1"] * 3
    assert c.delete() == 200
    spans.wait(lambda: spans.all("forkwatch.session.ended"))
    [ended] = spans.attrs("forkwatch.session.ended")
    assert ended["forkwatch.session.end_reason"] == "closed_by_client"
    c.close()


def test_a_resume_on_fastmcp_is_replayed_and_found(spans, serve):
    inst = ServerInstrumentation(tracer_provider=spans.provider, salt=SALT, request_span_delay_ms=0)
    c = RawClient(serve(inst.observe_app(fastmcp_app(steps=5))).url)
    c.initialize()
    cut = c.call_tool("slow_report", {"topic": "a"}, token="tok-1", max_events=2)
    last = [eid for eid, data in cut.events if eid and data][-1]
    r = c.resume(last, max_events=1)
    assert r.status == 200 and r.events
    spans.wait(lambda: spans.all("forkwatch.resume"))
    [resume] = spans.attrs("forkwatch.resume")
    assert resume["forkwatch.resume.outcome"] == "resumed"
    # FastMCP wraps its store per transport (SessionScopedEventStore); the ids it mints are seen as stored.
    assert resume["forkwatch.resume.last_event_found"] is True
    assert resume["forkwatch.resume.last_event_id"] == last
    c.close()


def test_a_reaped_fastmcp_session_resume_is_answered_404(spans, serve):
    inst = ServerInstrumentation(tracer_provider=spans.provider, salt=SALT)
    c = RawClient(serve(inst.observe_app(fastmcp_app(idle_timeout_s=0.3))).url)
    c.initialize()
    ans = c.call_tool("slow_report", {"topic": "a"}, token="tok-1")
    last = [eid for eid, _ in ans.events if eid][-1]
    spans.wait(lambda: spans.all("forkwatch.session.ended"))
    assert spans.attrs("forkwatch.session.ended")[0]["forkwatch.session.end_reason"] == "reaped_idle"
    assert c.resume(last).status == 404
    spans.wait(lambda: spans.all("forkwatch.resume"))
    [resume] = spans.attrs("forkwatch.resume")
    assert resume["forkwatch.resume.outcome"] == "rejected_404"
    c.close()


def test_observe_app_leaves_an_app_without_a_router_alone(spans):
    inst = ServerInstrumentation(tracer_provider=spans.provider)
    plain = object()
    assert inst.observe_app(plain) is plain
    app = fastmcp_app()
    assert inst.observe_app(inst.observe_app(app)) is app  # twice: wrapped once
    assert getattr(app.router.lifespan_context, "_forkwatch_observed", None) is inst


BIN = Path(sys.executable).parent / "opentelemetry-instrument"


@pytest.mark.skipif(not BIN.exists(), reason="opentelemetry-instrumentation not installed")
def test_opentelemetry_instrument_catches_an_unmodified_fastmcp_server():
    """The zero-code entry point patches `StreamableHTTPSessionManager.__init__`, which FastMCP's
    subclass calls when its lifespan makes the manager: no `observe_app` needed."""
    env = dict(os.environ)
    env.update(
        {
            "OTEL_TRACES_EXPORTER": "console",
            "OTEL_METRICS_EXPORTER": "none",
            "OTEL_LOGS_EXPORTER": "none",
            "OTEL_SERVICE_NAME": "py-zero-code-fastmcp",
            "OTEL_BSP_SCHEDULE_DELAY": "50",
            "FORKWATCH_SESSION_SALT": "zero",
            "FORKWATCH_REQUEST_SPAN_DELAY_MS": "0",
            "PYTHONUNBUFFERED": "1",
        }
    )
    proc = subprocess.Popen(
        [str(BIN), sys.executable, str(FIXTURES / "fastmcp_server.py"), "--port", "0"],
        cwd=FIXTURES,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    out: list[str] = []
    reader = threading.Thread(target=lambda: out.extend(iter(proc.stdout.readline, "")), daemon=True)  # type: ignore[union-attr]
    reader.start()
    try:
        deadline = time.monotonic() + 60
        port = None
        while port is None:
            assert time.monotonic() < deadline, "".join(out)
            port = next((int(x.split()[1]) for x in list(out) if x.startswith("listening ")), None)
            time.sleep(0.05)
        c = RawClient(f"http://127.0.0.1:{port}/mcp")
        c.initialize()
        assert c.call_tool("slow_report", {"topic": "a"}, token="tok-z").status == 200
        assert c.resume("e99", sid="unknown-session").status == 404
        c.close()
        while not any('"forkwatch.resume"' in x for x in list(out)):
            assert time.monotonic() < deadline, "".join(out)
            time.sleep(0.05)
        text = "".join(out)
        assert f'"forkwatch.session.key": "{session_key(c.session_id or "", "zero")}"' in text
        assert '"forkwatch.session.created_by": "initialize"' in text
        assert '"forkwatch.progress.token": "tok-z"' in text
        assert '"forkwatch.resume.outcome": "rejected_404"' in text
    finally:
        proc.terminate()
        proc.wait(15)
        reader.join(5)
