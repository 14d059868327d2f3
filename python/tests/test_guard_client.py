"""The client guard with the SDK's ClientSession over real HTTP: forks raise SessionForkError at once."""

from __future__ import annotations

import time

import anyio
import httpx2
import pytest

from apps import naive_app, seed_server, sound_app
from faults import PartitionTransport
from forkwatch_instrumentation.client import ClientInstrumentation
from forkwatch_instrumentation.guard import ClientGuard, ForkGuard, SessionForkError, connect_guarded

SALT = "test-salt"


async def _on_progress(progress, total, message):
    pass


async def _guarded_call(url, guard, inner=None, read_timeout_s=20.0):
    async with connect_guarded(url, guard=guard, transport=inner) as client:
        return await client.call_tool(
            "slow_report", {"topic": "x"}, read_timeout_seconds=read_timeout_s, progress_callback=_on_progress
        )


@pytest.mark.anyio
async def test_healthy_call_passes_untouched(spans, serve):
    app, _ = sound_app(seed_server(steps=3, step_ms=20))
    guard = ClientGuard(tracer_provider=spans.provider, salt=SALT)
    result = await _guarded_call(serve(app).url, guard)
    assert "report on x" in result.content[0].text
    assert guard.forked is None and spans.all("forkwatch.guard.fork") == []


@pytest.mark.anyio
async def test_rehydrated_session_fails_the_pending_call_at_once(spans, serve):
    # The seed's fork: the call's stream is cut, the session is reaped, the resume is answered 200
    # by a rehydrated life of the session with an empty log. Unguarded, the call waits for its read
    # timeout (test_client.py); guarded, it fails with SessionForkError right at the resume.
    app, _ = naive_app(seed_server(steps=5, step_ms=150), idle_timeout_s=0.3)
    url = serve(app).url
    guard = ClientGuard(tracer_provider=spans.provider, salt=SALT)
    cut = PartitionTransport(b"tools/call", after_events=2)
    t0 = time.monotonic()
    with pytest.raises(SessionForkError) as info, anyio.fail_after(30):
        await _guarded_call(url, guard, cut, read_timeout_s=60.0)
    waited = time.monotonic() - t0
    assert cut.cut and info.value.kind == "replay_gap" and info.value.code == "FORKWATCH_ERR_SESSION_FORK"
    cursor = info.value.last_event_id
    assert cursor is not None and cursor.startswith("e")  # the naive store's counter ids
    # Failed at the first resume (SDK retry delay 1 s), nowhere near the 60 s read timeout.
    assert waited < 15, waited
    [fork] = spans.attrs("forkwatch.guard.fork")
    assert fork["forkwatch.guard.fork_kind"] == "replay_gap" and fork["forkwatch.guarded"] is True
    assert fork["forkwatch.resume.last_event_id"] == cursor
    assert fork["forkwatch.session.key"] == info.value.session_key


@pytest.mark.anyio
async def test_session_reaped_by_a_sound_server_raises_session_not_found(spans, serve):
    app, _ = sound_app(seed_server(steps=5, step_ms=150), idle_timeout_s=0.3)
    url = serve(app).url
    guard = ClientGuard(tracer_provider=spans.provider, salt=SALT)
    cut = PartitionTransport(b"tools/call", after_events=2)
    with pytest.raises(SessionForkError) as info, anyio.fail_after(30):
        await _guarded_call(url, guard, cut, read_timeout_s=60.0)
    assert info.value.kind == "session_not_found"
    # Refused from then on: the connection never silently continues on another session.
    with pytest.raises(SessionForkError):
        await guard.guarded(anyio.sleep(0))


def test_fork_guard_sequence_checks():
    g = ForkGuard("s", None, "k")
    assert g.accept_event("e1", "post:1", "d1") and g.accept_event("e2", "post:1", "d2")
    assert not g.accept_event("e2", "post:1", "d2")  # exact duplicate: dropped
    with pytest.raises(SessionForkError) as info:
        g.accept_event("e2", "post:1", "other")
    assert info.value.kind == "sequence_regression"
    g.open_stream("post:2", {"counter": 2})
    with pytest.raises(SessionForkError):
        g.accept_event("e1", "post:2", "fresh")  # a new stream restarting at e1: a fresh log
    g2 = ForkGuard("s", "0123456789abcdef", "k")
    with pytest.raises(SessionForkError) as info:
        g2.accept_event("fedcba9876543210-1")
    assert info.value.kind == "incarnation_changed"
    g2.resume("0123456789abcdef-3", "s", "0123456789abcdef")
    with pytest.raises(SessionForkError) as info:
        g2.resume("0123456789abcdef-3", "other", None)
    assert info.value.kind == "session_id_changed"
    _ = httpx2


@pytest.mark.anyio
@pytest.mark.parametrize(("make_app", "outcome"), [(naive_app, "failed_fork"), (sound_app, "failed_session_lost")])
async def test_instrumented_guarded_call_is_settled_by_the_guard_not_as_a_server_error(spans, serve, make_app, outcome):
    app, _ = make_app(seed_server(steps=5, step_ms=150), idle_timeout_s=0.3)
    url = serve(app).url
    guard = ClientGuard(tracer_provider=spans.provider, salt=SALT)
    ci = ClientInstrumentation(tracer_provider=spans.provider, salt=SALT, request_span_delay_ms=0)
    cut = PartitionTransport(b"tools/call", after_events=2)
    with pytest.raises(SessionForkError), anyio.fail_after(30):
        async with connect_guarded(url, guard=guard, instrumentation=ci, transport=cut) as client:
            await client.call_tool(
                "slow_report", {"topic": "x"}, read_timeout_seconds=60, progress_callback=_on_progress
            )
    settled = [s for s in spans.attrs("forkwatch.request.settled", "client") if s["mcp.method.name"] == "tools/call"]
    assert [s["forkwatch.request.outcome"] for s in settled] == [outcome]
