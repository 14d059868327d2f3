"""A server stopped mid-call (SIGTERM, as an orchestrator's rolling restart does) ends its sessions in
its last moments; their `session.ended` spans are the evidence that the pending call was orphaned.
With a batching span processor they went down with the process (uvicorn re-raises the signal once it
has served, so no atexit hook runs): the instrumentation flushes the provider when an observed manager
stops. The app runs in its own process (shutdown_app.py), its processor batching for a minute."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx2
import pytest

from raw_client import RawClient

APP = Path(__file__).resolve().parent / "shutdown_app.py"


def _spans(path: Path) -> list[tuple[str, dict[str, object]]]:
    out: list[tuple[str, dict[str, object]]] = []
    if not path.exists():
        return out
    for line in path.read_text().splitlines():
        for rs in json.loads(line).get("resourceSpans", []):
            for ss in rs.get("scopeSpans", []):
                for s in ss.get("spans", []):
                    attrs = {a["key"]: next(iter(a["value"].values())) for a in s.get("attributes", [])}
                    out.append((s["name"], attrs))
    return out


def _stopped_mid_call(tmp_path: Path, observe: str, flush_ms: int | None) -> list[tuple[str, dict[str, object]]]:
    spans = tmp_path / "spans.jsonl"
    cmd = [sys.executable, str(APP), "--observe", observe, "--spans", str(spans)]
    if flush_ms is not None:
        cmd += ["--flush-ms", str(flush_ms)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("listening "), line
        url = f"http://127.0.0.1:{int(line.split()[1])}/mcp"
        client = RawClient(url)
        client.initialize()
        progressed = threading.Event()

        def call() -> None:
            h = client._headers()
            body = {
                "jsonrpc": "2.0",
                "id": 9,
                "method": "tools/call",
                "params": {"name": "slow_report", "arguments": {"topic": "t"}, "_meta": {"progressToken": "tok"}},
            }
            try:
                with httpx2.stream("POST", url, headers=h, content=json.dumps(body), timeout=30) as r:
                    for chunk in r.iter_text():
                        if "notifications/progress" in chunk:
                            progressed.set()
            except httpx2.HTTPError:
                pass  # the server went away mid-call: what this test is about

        t = threading.Thread(target=call, daemon=True)
        t.start()
        assert progressed.wait(15), "the call never reported progress"
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
        t.join(10)
        client.close()
        return _spans(spans)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("observe", ["manager", "app"])
def test_sessions_ended_by_a_shutdown_reach_the_exporter(tmp_path: Path, observe: str) -> None:
    got = _stopped_mid_call(tmp_path, observe, None)
    ended = [a for n, a in got if n == "forkwatch.session.ended"]
    assert [a.get("forkwatch.session.end_reason") for a in ended] == ["server_shutdown"], got
    received = [a for n, a in got if n == "forkwatch.request.received" and a.get("jsonrpc.request.id") == "9"]
    assert len(received) == 1 and received[0].get("forkwatch.progress.token") == "tok", got


def test_without_the_flush_the_batch_goes_down_with_the_process(tmp_path: Path) -> None:
    # The control: with the flush off (0), nothing of the call or its end is exported at all.
    assert _stopped_mid_call(tmp_path, "manager", 0) == []
