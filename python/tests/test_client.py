"""Client instrumentation with the SDK's ClientSession over streamable_http_client, real HTTP."""

from __future__ import annotations

from datetime import timedelta

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from apps import cancellable_server, naive_app, seed_server, sound_app
from cancel_tap import CancelTap
from faults import PartitionTransport
from forkwatch_instrumentation import ServerInstrumentation, session_key
from forkwatch_instrumentation.client import ClientInstrumentation

SALT = "test-salt"


def _server(spans, make_app, **opts):
    inst = ServerInstrumentation(tracer_provider=spans.provider, salt=SALT, **opts)
    app, manager = make_app(seed_server(steps=5, step_ms=150))
    inst.observe_manager(manager)
    return app


async def _call(url, client_inst, inner=None, timeout_s=20.0):
    http = httpx2.AsyncClient(transport=client_inst.wrap_transport(inner), timeout=30)
    progress: list[float] = []

    async def on_progress(p, total, message):
        progress.append(p)

    async with http, streamable_http_client(url, http_client=http) as (read, write):
        async with ClientSession(client_inst.attach(read), write) as session:
            await session.initialize()
            result = await session.call_tool(
                "slow_report", {"topic": "x"}, read_timeout_seconds=timeout_s, progress_callback=on_progress
            )
            return result, progress


@pytest.mark.anyio
async def test_healthy_call_initialize_recorded_call_answered_within_delay(spans, serve):
    url = serve(_server(spans, sound_app)).url
    ci = ClientInstrumentation(tracer_provider=spans.provider, salt=SALT)
    result, progress = await _call(url, ci)
    assert "report on x" in result.content[0].text and len(progress) == 5
    sent = spans.attrs("forkwatch.request.sent", "client")
    assert [s["mcp.method.name"] for s in sent] == ["initialize"]
    [settled] = spans.attrs("forkwatch.request.settled", "client")
    assert settled["forkwatch.request.outcome"] == "answered"
    created = spans.attrs("forkwatch.session.created", "server")
    # As in TS: initialize is written before any session id exists; its settlement knows the session.
    assert "forkwatch.session.key" not in sent[0]
    assert created and settled["forkwatch.session.key"] == created[0]["forkwatch.session.key"]
    assert spans.all("forkwatch.resume") == []


@pytest.mark.anyio
async def test_partition_then_rehydrated_session_fork_is_visible_on_both_sides(spans, serve):
    url = serve(_server(spans, lambda s: naive_app(s, idle_timeout_s=0.3))).url
    ci = ClientInstrumentation(tracer_provider=spans.provider, salt=SALT)
    cut = PartitionTransport(b"tools/call", after_events=2)
    # The stock SDK client never learns of the fork: its resumes are answered 200 by a new life of
    # the session with an empty log, and it waits on the call until its own read timeout.
    with pytest.raises(Exception):  # noqa: B017 - the SDK's timeout error type is not the point
        with anyio.fail_after(30):
            await _call(url, ci, cut, timeout_s=4.0)
    ci.flush()
    assert cut.cut
    resumes = spans.attrs("forkwatch.resume", "client")
    assert resumes and resumes[0]["http.response.status_code"] == 200
    server_created = spans.attrs("forkwatch.session.created", "server")
    assert [c["forkwatch.session.created_by"] for c in server_created][:2] == ["initialize", "GET"]
    key = server_created[0]["forkwatch.session.key"]
    assert resumes[0]["forkwatch.session.key"] == key
    sent = [s for s in spans.attrs("forkwatch.request.sent", "client") if s["mcp.method.name"] == "tools/call"]
    assert sent and "forkwatch.progress.token" in sent[0] and sent[0]["forkwatch.session.key"] == key
    # The events received before the cut were buffered, then emitted at the resume (a moment).
    events = spans.attrs("forkwatch.sse.event", "client")
    assert events and all(e["forkwatch.session.key"] == key for e in events)
    assert resumes[0]["forkwatch.resume.last_event_id"] in {e["forkwatch.sse.event.id"] for e in events}
    assert session_key("x", SALT) != key
    _ = timedelta


@pytest.mark.anyio
async def test_a_call_the_app_cancels_is_settled_cancelled_whatever_the_sdk_reads_after(spans, serve):
    # mcp answers a cancelled request -32800 on the 2025 wire; whether the SDK still reads it is a race
    # (an unsettled call then reads as orphaned when the session ends). The cancel on the wire decides.
    app, _ = sound_app(cancellable_server(cleanup_ms=1000))
    url = serve(app).url
    ci = ClientInstrumentation(tracer_provider=spans.provider, salt=SALT)
    tap = CancelTap(httpx2.AsyncHTTPTransport())
    progressed = anyio.Event()

    async def on_progress(p, total, message):
        progressed.set()

    with anyio.fail_after(15):
        async with httpx2.AsyncClient(transport=ci.wrap_transport(tap), timeout=30) as http:
            async with streamable_http_client(url, http_client=http) as (read, write):
                async with ClientSession(ci.attach(read), write) as session:
                    await session.initialize()
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(
                            lambda: session.call_tool("slow_report", {"topic": "x"}, progress_callback=on_progress)
                        )
                        await progressed.wait()
                        tg.cancel_scope.cancel()
                    await tap.cancel_answered.wait()
    settled = [s for s in spans.attrs("forkwatch.request.settled", "client") if s["mcp.method.name"] == "tools/call"]
    assert [s["forkwatch.request.outcome"] for s in settled] == ["cancelled"]
    [sent] = [s for s in spans.attrs("forkwatch.request.sent", "client") if s["mcp.method.name"] == "tools/call"]
    assert settled[0]["jsonrpc.request.id"] == sent["jsonrpc.request.id"]
