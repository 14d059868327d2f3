"""Server instrumentation against the real `mcp` SDK over real HTTP (uvicorn on an ephemeral port)."""

from __future__ import annotations

import re

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from apps import cancellable_server, naive_app, seed_server, sound_app
from cancel_tap import CancelTap
from forkwatch_instrumentation import ServerInstrumentation, session_key
from raw_client import RawClient

SALT = "test-salt"


def _instrumented(spans, make_app, **opts):
    inst = ServerInstrumentation(tracer_provider=spans.provider, salt=SALT, **opts)
    app, manager = make_app(seed_server())
    inst.observe_manager(manager)
    return inst, app


def test_healthy_session_created_by_initialize_and_closed_by_client(spans, serve):
    inst, app = _instrumented(spans, sound_app)
    c = RawClient(serve(app).url)
    c.initialize()
    ans = c.call_tool("slow_report", {"topic": "a"}, token="tok-1")
    assert ans.status == 200 and any('"result"' in d for _, d in ans.events)
    assert c.delete() == 200
    spans.wait(lambda: spans.all("forkwatch.session.ended"))
    [created] = spans.attrs("forkwatch.session.created")
    key = session_key(c.session_id or "", SALT)
    assert created["forkwatch.session.key"] == key
    assert created["forkwatch.session.created_by"] == "initialize"
    assert created["forkwatch.session.client_supplied_id"] is False
    assert created["forkwatch.session.incarnation.source"] == "observed"
    assert re.fullmatch(r"[0-9a-f]{16}", created["forkwatch.session.incarnation"])
    assert created["forkwatch.schema.version"] == 1 and created["forkwatch.side"] == "server"
    [init] = spans.attrs("forkwatch.request.received")
    assert init["mcp.method.name"] == "initialize"
    # The tool call was answered within the delay, no moment happened: no request or event span.
    assert spans.all("forkwatch.sse.event") == []
    [ended] = spans.attrs("forkwatch.session.ended")
    assert ended["forkwatch.session.end_reason"] == "closed_by_client"
    assert ended["forkwatch.session.incarnation"] == created["forkwatch.session.incarnation"]
    assert inst.buffered_events == 0
    c.close()


def test_every_event_and_request_at_once_with_delay_zero(spans, serve):
    _, app = _instrumented(spans, sound_app, request_span_delay_ms=0)
    c = RawClient(serve(app).url)
    c.initialize()
    ans = c.call_tool("slow_report", {"topic": "a"}, token="tok-1")
    sent = [eid for eid, _ in ans.events if eid]
    spans.wait(lambda: len(spans.all("forkwatch.sse.event")) >= len(sent))
    events = spans.attrs("forkwatch.sse.event")
    by_id = {e["forkwatch.sse.event.id"]: e for e in events}
    assert set(sent) <= set(by_id)
    progress = [e for e in events if e.get("mcp.method.name") == "notifications/progress"]
    assert len(progress) == 3 and all(p["forkwatch.progress.token"] == "tok-1" for p in progress)
    assert all(e["forkwatch.sse.event.seq.source"] == "counter" for e in events)
    assert {e["forkwatch.jsonrpc.kind"] for e in events} >= {"notification", "response"}
    call = [r for r in spans.attrs("forkwatch.request.received") if r["mcp.method.name"] == "tools/call"]
    assert call and call[0]["forkwatch.progress.token"] == "tok-1" and call[0]["gen_ai.tool.name"] == "slow_report"
    c.close()


def test_reaped_session_then_resume_answered_404(spans, serve):
    _, app = _instrumented(spans, lambda s: sound_app(s, idle_timeout_s=0.3))
    c = RawClient(serve(app).url)
    c.initialize()
    ans = c.call_tool("slow_report", {"topic": "a"}, token="tok-1")
    last = [eid for eid, _ in ans.events if eid][-1]
    spans.wait(lambda: spans.all("forkwatch.session.ended"))
    [ended] = spans.attrs("forkwatch.session.ended")
    assert ended["forkwatch.session.end_reason"] == "reaped_idle"
    assert spans.all("forkwatch.sse.event") == []  # buffered: no moment yet
    r = c.resume(last)
    assert r.status == 404
    spans.wait(lambda: spans.all("forkwatch.resume"))
    [resume] = spans.attrs("forkwatch.resume")
    assert resume["forkwatch.resume.outcome"] == "rejected_404"
    assert resume["http.response.status_code"] == 404
    assert resume["forkwatch.resume.last_event_id"] == last
    assert resume["forkwatch.session.key"] == session_key(c.session_id or "", SALT)
    # The moment emitted the reaped incarnation's buffered events, stamped when they were sent.
    events = spans.all("forkwatch.sse.event")
    assert {(s.attributes or {})["forkwatch.sse.event.id"] for s in events} >= {last}
    [resume_span] = spans.all("forkwatch.resume")
    assert all(s.start_time < resume_span.start_time for s in events)
    c.close()


def test_naive_rehydration_is_created_by_get_and_forked(spans, serve):
    _, app = _instrumented(spans, lambda s: naive_app(s, idle_timeout_s=0.3))
    c = RawClient(serve(app).url)
    c.initialize()
    ans = c.call_tool("slow_report", {"topic": "a"}, token="tok-1")
    last = [eid for eid, _ in ans.events if eid][-1]
    spans.wait(lambda: spans.all("forkwatch.session.ended"))
    r = c.resume(last)
    assert r.status == 200
    spans.wait(lambda: spans.all("forkwatch.resume"))
    created = spans.attrs("forkwatch.session.created")
    assert [x["forkwatch.session.created_by"] for x in created] == ["initialize", "GET"]
    assert created[1]["forkwatch.session.client_supplied_id"] is True
    assert created[1]["forkwatch.resume.last_event_id"] == last
    assert created[0]["forkwatch.session.key"] == created[1]["forkwatch.session.key"]
    assert created[0]["forkwatch.session.incarnation"] != created[1]["forkwatch.session.incarnation"]
    [resume] = spans.attrs("forkwatch.resume")
    assert resume["forkwatch.resume.outcome"] == "forked"
    assert resume["forkwatch.resume.last_event_found"] is False
    assert resume["forkwatch.session.incarnation"] == created[1]["forkwatch.session.incarnation"]
    c.close()


def test_a_call_whose_received_span_went_out_has_its_answer_emitted_before_delete(spans, serve):
    # The fleet bench's false orphan: the call outlived the delay (its request.received went out),
    # was answered, and a DELETE right after dropped the buffered answer.
    inst = ServerInstrumentation(tracer_provider=spans.provider, salt=SALT, request_span_delay_ms=50)
    app, manager = sound_app(seed_server(steps=3, step_ms=100))
    inst.observe_manager(manager)
    c = RawClient(serve(app).url)
    c.initialize()
    ans = c.call_tool("slow_report", {"topic": "a"}, token="tok-1")
    assert ans.status == 200 and any('"result"' in d for _, d in ans.events)
    assert c.delete() == 200
    spans.wait(lambda: spans.all("forkwatch.session.ended"))
    [call] = [r for r in spans.attrs("forkwatch.request.received") if r["mcp.method.name"] == "tools/call"]
    names = [s.name for s in spans.all()]
    answers = [
        i
        for i, s in enumerate(spans.all())
        if s.name == "forkwatch.sse.event"
        and (s.attributes or {}).get("forkwatch.jsonrpc.kind") == "response"
        and (s.attributes or {}).get("jsonrpc.request.id") == call["jsonrpc.request.id"]
    ]
    assert answers, names
    assert answers[0] < names.index("forkwatch.session.ended")
    assert inst.buffered_events == 0
    c.close()


async def _cancelled_call(spans, serve, delay_ms: int, went_out: bool):
    """The SDK client's app cancels a slow call after its first progress notification (once its
    request.received went out, when `went_out`), then closes the session (DELETE)."""
    inst = ServerInstrumentation(tracer_provider=spans.provider, salt=SALT, request_span_delay_ms=delay_ms)
    # The SDK answers a cancelled request (-32800) once its handler is done, which would unhold it
    # like any answer: the tool's 1 s cleanup puts that answer after the session's end, so only
    # the cancel itself can tell the instrumentation the client stopped waiting.
    app, manager = sound_app(cancellable_server(cleanup_ms=1000))
    inst.observe_manager(manager)
    url = serve(app).url
    tap = CancelTap(httpx2.AsyncHTTPTransport())
    progressed = anyio.Event()

    async def on_progress(p, total, message):
        progressed.set()

    def call_received() -> bool:
        return any(r["mcp.method.name"] == "tools/call" for r in spans.attrs("forkwatch.request.received"))

    with anyio.fail_after(15):
        async with httpx2.AsyncClient(transport=tap, timeout=30) as http:
            async with streamable_http_client(url, http_client=http) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(
                            lambda: session.call_tool("slow_report", {"topic": "x"}, progress_callback=on_progress)
                        )
                        await progressed.wait()
                        while went_out and not call_received():
                            await anyio.sleep(0.02)
                        tg.cancel_scope.cancel()  # the app aborts its call: the SDK sends notifications/cancelled
                    await tap.cancel_answered.wait()
    spans.wait(lambda: spans.all("forkwatch.session.ended"))


@pytest.mark.anyio
async def test_a_call_cancelled_while_held_emits_nothing_when_the_session_then_ends(spans, serve):
    await _cancelled_call(spans, serve, delay_ms=10_000, went_out=False)
    [ended] = spans.attrs("forkwatch.session.ended")
    assert ended["forkwatch.session.end_reason"] == "closed_by_client"
    # Without the cancel read, the session's end would emit the held call as received and unanswered.
    assert [r["mcp.method.name"] for r in spans.attrs("forkwatch.request.received")] == ["initialize"]
    assert spans.all("forkwatch.request.settled") == []


@pytest.mark.anyio
async def test_a_call_cancelled_after_its_received_span_went_out_is_settled_cancelled_before_the_end(spans, serve):
    await _cancelled_call(spans, serve, delay_ms=50, went_out=True)
    [call] = [r for r in spans.attrs("forkwatch.request.received") if r["mcp.method.name"] == "tools/call"]
    [settled] = spans.attrs("forkwatch.request.settled")
    assert settled["forkwatch.side"] == "server"
    assert settled["forkwatch.request.outcome"] == "cancelled"
    assert settled["mcp.method.name"] == "tools/call"
    assert settled["jsonrpc.request.id"] == call["jsonrpc.request.id"]
    assert settled["forkwatch.session.key"] == call["forkwatch.session.key"]
    assert settled["forkwatch.session.incarnation"] == call["forkwatch.session.incarnation"]
    # From the request's arrival (it outlived the 50 ms delay), stamped when the cancel was read.
    assert (
        isinstance(settled["forkwatch.request.duration_ms"], float) and settled["forkwatch.request.duration_ms"] >= 50
    )
    names = [s.name for s in spans.all()]
    assert names.index("forkwatch.request.settled") < names.index("forkwatch.session.ended")
    [settled_span] = spans.all("forkwatch.request.settled")
    [call_span] = [
        s for s in spans.all("forkwatch.request.received") if (s.attributes or {})["mcp.method.name"] == "tools/call"
    ]
    assert settled_span.start_time - call_span.start_time >= 50_000_000
