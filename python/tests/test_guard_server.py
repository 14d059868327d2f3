"""The guarded server side (GuardedSessionManager) over real HTTP, with raw requests and the guarded client."""

from __future__ import annotations

import re

import anyio
import pytest

from apps import guarded_app, seed_server
from faults import PartitionTransport
from forkwatch_instrumentation.guard import ClientGuard, GuardedEventStore, SessionForkError, connect_guarded
from raw_client import RawClient

SALT = "test-salt"


async def _noop_progress(progress, total, message):
    pass


@pytest.mark.anyio
async def test_incarnation_header_and_guarded_event_ids_on_a_healthy_call(spans, serve):
    app, _ = guarded_app(seed_server(steps=2, step_ms=10))
    url = serve(app).url
    guard = ClientGuard(tracer_provider=spans.provider, salt=SALT)
    async with connect_guarded(url, guard=guard) as client:
        result = await client.call_tool("slow_report", {"topic": "x"}, progress_callback=_noop_progress)
        assert "report on x" in result.content[0].text
        assert client.incarnation is not None and re.fullmatch(r"[0-9a-f]{16}", client.incarnation)
        assert guard.session is not None and guard.session.last_event_id is not None
        assert guard.session.last_event_id.startswith(client.incarnation + "-")
    assert guard.forked is None


def test_unknown_session_404_and_log_gap_409(serve):
    app, _ = guarded_app(seed_server(steps=3, step_ms=10), max_events_per_session=2)
    raw = RawClient(serve(app).url)
    try:
        gone = raw.resume("e1", sid="nope")
        assert gone.status == 404 and gone.body["error"]["code"] == -32001
        assert raw.post({"jsonrpc": "2.0", "id": 99, "method": "tools/list"}, sid="nope").status == 404
        init = raw.initialize()
        incarnation = init.headers["mcp-session-incarnation"]
        assert re.fullmatch(r"[0-9a-f]{16}", incarnation)
        ids = [e for e, _ in raw.call_tool("slow_report", {"topic": "x"}, token="t").events if e]
        assert len(ids) >= 3 and all(i.startswith(incarnation + "-") for i in ids)
        kept = raw.resume(ids[-1], max_events=0)
        assert kept.status == 200 and kept.headers["mcp-session-incarnation"] == incarnation
        other = "0123456789abcdef" if incarnation != "0123456789abcdef" else "fedcba9876543210"
        cases = {ids[0]: "event_evicted", f"{other}-1": "other_incarnation", "e5": "unknown_event"}
        for cursor, reason in cases.items():
            r = raw.resume(cursor)
            assert r.status == 409, (cursor, r.status, r.body)
            assert r.body["error"] == {
                "code": -32002,
                "message": "Event not in session log",
                "data": {"reason": reason},
            }
    finally:
        raw.close()


@pytest.mark.anyio
async def test_guarded_pair_reaped_session_is_session_not_found_at_once(spans, serve):
    app, _ = guarded_app(seed_server(steps=5, step_ms=150), idle_timeout_s=0.3)
    url = serve(app).url
    guard = ClientGuard(tracer_provider=spans.provider, salt=SALT)
    cut = PartitionTransport(b"tools/call", after_events=2)
    with pytest.raises(SessionForkError) as info, anyio.fail_after(30):
        async with connect_guarded(url, guard=guard, transport=cut) as client:
            await client.call_tool(
                "slow_report", {"topic": "x"}, read_timeout_seconds=60, progress_callback=_noop_progress
            )
    assert info.value.kind == "session_not_found"
    [fork] = spans.attrs("forkwatch.guard.fork")
    assert fork["forkwatch.guard.fork_kind"] == "session_not_found"
    assert fork["forkwatch.session.incarnation"] == guard.session.incarnation


@pytest.mark.anyio
async def test_event_store_bounds_and_reasons():
    store = GuardedEventStore("0123456789abcdef", max_events=3, max_bytes=1 << 20)
    ids = [await store.store_event("s", None) for _ in range(5)]
    assert ids[-1] == "0123456789abcdef-5"
    assert store.why_absent(ids[-1]) is None and store.why_absent(ids[0]) == "event_evicted"
    assert store.why_absent("fedcba9876543210-4") == "other_incarnation"
    assert store.why_absent("0123456789abcdef-9") == "unknown_event"
