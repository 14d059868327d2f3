"""Every span the Python instrumentation emits in the scripted scenarios, held to docs/telemetry.md."""

from __future__ import annotations

import hashlib

import anyio
import pytest

from apps import naive_app, seed_server, sound_app
from faults import PartitionTransport
from forkwatch_instrumentation import ServerInstrumentation
from forkwatch_instrumentation.client import ClientInstrumentation
from raw_client import RawClient
from schema_check import read_schema, violations
from test_client import _call

SALT = "schema-salt"
SCHEMA = read_schema()


def _key(sid: str) -> str:
    return hashlib.sha256((SALT + sid).encode()).hexdigest()[:32]


def test_the_doc_tables_are_read():
    common, spans = SCHEMA
    assert common["forkwatch.session.key"] == "string" and common["forkwatch.schema.version"] == "int"
    assert spans["forkwatch.sse.event"]["forkwatch.sse.event.seq"] == "int"
    assert "forkwatch.request.outcome" in spans["forkwatch.request.settled"]
    assert {"forkwatch.request.sent", "forkwatch.request.received", "forkwatch.resume"} <= set(spans)


def test_the_checker_fails_a_span_missing_a_required_attribute():
    good = {
        "forkwatch.schema.version": 1,
        "forkwatch.side": "server",
        "forkwatch.session.key": "a" * 32,
        "forkwatch.session.created_by": "initialize",
        "forkwatch.session.client_supplied_id": False,
        "http.request.method": "POST",
    }
    assert violations("forkwatch.session.created", good, SCHEMA) == []
    dropped = {k: v for k, v in good.items() if k != "forkwatch.session.created_by"}
    assert violations("forkwatch.session.created", dropped, SCHEMA) == [
        "forkwatch.session.created: required forkwatch.session.created_by missing"
    ]
    assert violations("forkwatch.session.created", {**good, "forkwatch.session.client_supplied_id": "no"}, SCHEMA)
    assert violations("forkwatch.session.created", {**good, "forkwatch.bogus": 1}, SCHEMA)


@pytest.mark.anyio
@pytest.mark.parametrize("make_app", [sound_app, naive_app], ids=["sound", "naive"])
async def test_every_span_of_the_scenarios_matches_the_doc(spans, serve, make_app):
    inst = ServerInstrumentation(tracer_provider=spans.provider, salt=SALT, request_span_delay_ms=0)
    app, manager = make_app(seed_server(steps=3, step_ms=100), idle_timeout_s=0.3)
    inst.observe_manager(manager)
    url = serve(app).url
    # healthy, delete, reap + resume (404 or rehydrated), with every span emitted at once
    raw = RawClient(url)
    raw.initialize()
    ans = raw.call_tool("slow_report", {"topic": "a"}, token="t1")
    last = [e for e, _ in ans.events if e][-1]
    sids = {raw.session_id or ""}
    spans.wait(lambda: spans.all("forkwatch.session.ended"))
    raw.resume(last)
    raw.close()
    raw2 = RawClient(url)
    raw2.initialize()
    sids.add(raw2.session_id or "")
    raw2.delete()
    raw2.close()
    # the SDK client through a partition
    ci = ClientInstrumentation(tracer_provider=spans.provider, salt=SALT, request_span_delay_ms=0)
    try:
        with anyio.fail_after(30):
            await _call(url, ci, PartitionTransport(b"tools/call", after_events=2), timeout_s=4.0)
    except Exception:
        pass
    ci.flush()
    inst.flush()
    sids |= {s.session_id for s in ci._sessions.values()}
    keys = {sid: _key(sid) for sid in sids}
    emitted = spans.all()
    assert {s.name for s in emitted} >= {
        "forkwatch.session.created",
        "forkwatch.session.ended",
        "forkwatch.sse.event",
        "forkwatch.resume",
        "forkwatch.request.received",
        "forkwatch.request.sent",
    }
    problems = [p for s in emitted for p in violations(s.name, dict(s.attributes or {}), SCHEMA, keys)]
    assert problems == []
    assert all(s.kind.name == "INTERNAL" for s in emitted)


def test_server_spans_join_the_trace_of_the_request(spans, serve):
    inst = ServerInstrumentation(tracer_provider=spans.provider, salt=SALT)
    app, manager = sound_app(seed_server())
    inst.observe_manager(manager)
    raw = RawClient(serve(app).url)
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    raw.http.headers["traceparent"] = f"00-{trace_id}-00f067aa0ba902b7-01"
    raw.initialize()
    raw.close()
    spans.wait(lambda: spans.all("forkwatch.session.created"))
    [created] = spans.all("forkwatch.session.created")
    assert format(created.context.trace_id, "032x") == trace_id
    assert created.parent is not None and format(created.parent.span_id, "016x") == "00f067aa0ba902b7"
