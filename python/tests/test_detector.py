"""The Python pair against the real detector: spans of an instrumented Python client and server,
exported as OTLP JSON, fed to `forkwatch analyze` (the detector's engine, from this clone's src/)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import anyio
import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from apps import naive_app, seed_server, sound_app
from conftest import Spans
from faults import PartitionTransport
from forkwatch_instrumentation import ServerInstrumentation
from forkwatch_instrumentation.client import ClientInstrumentation
from otlp_json import otlp_json_line
from test_client import _call

REPO = Path(__file__).resolve().parents[2]
NODE = shutil.which("node")
SALT = "detector-salt"


def _side(service: str) -> Spans:
    s = Spans()
    s.provider = TracerProvider(resource=Resource.create({"service.name": service}))
    s.provider.add_span_processor(SimpleSpanProcessor(s.exporter))
    return s


def _analyze(tmp_path: Path, *sides: Spans) -> list[dict]:
    f = tmp_path / "spans.jsonl"
    f.write_text("\n".join(otlp_json_line(s.all()) for s in sides) + "\n")
    r = subprocess.run(
        [
            NODE or "node",
            "--conditions=forkwatch-source",
            "--import",
            "tsx",
            "src/cli/bin.ts",
            "analyze",
            "--json",
            str(f),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode in (0, 1), r.stderr
    out = json.loads(r.stdout)
    return out["findings"] if isinstance(out, dict) else out


async def _scenario(make_app, server: Spans, client: Spans, serve) -> None:
    inst = ServerInstrumentation(tracer_provider=server.provider, salt=SALT)
    app, manager = make_app(seed_server(steps=5, step_ms=150))
    inst.observe_manager(manager)
    url = serve(app).url
    ci = ClientInstrumentation(tracer_provider=client.provider, salt=SALT)
    try:
        with anyio.fail_after(30):
            await _call(url, ci, PartitionTransport(b"tools/call", after_events=2), timeout_s=4.0)
    except Exception:
        pass
    ci.flush()
    inst.flush()


@pytest.mark.skipif(NODE is None or not (REPO / "node_modules" / "tsx").exists(), reason="node/tsx not available")
@pytest.mark.anyio
async def test_seed_fork_python_pair_detector_finds_minted_on_resume(serve, tmp_path):
    server, client = _side("py-naive-server"), _side("py-client")
    await _scenario(lambda s: naive_app(s, idle_timeout_s=0.3), server, client, serve)
    kinds = sorted({f["kind"] for f in _analyze(tmp_path, server, client)})
    assert {"minted_on_resume", "orphaned_progress_token"} <= set(kinds), kinds


@pytest.mark.skipif(NODE is None or not (REPO / "node_modules" / "tsx").exists(), reason="node/tsx not available")
@pytest.mark.anyio
async def test_sound_server_python_pair_no_fork_finding(serve, tmp_path):
    server, client = _side("py-sound-server"), _side("py-client")
    await _scenario(lambda s: sound_app(s, idle_timeout_s=0.3), server, client, serve)
    kinds = sorted({f["kind"] for f in _analyze(tmp_path, server, client)})
    assert "minted_on_resume" not in kinds and "incarnation_changed" not in kinds, kinds
