"""Zero code: `opentelemetry-instrument` finds the `forkwatch_mcp` entry point and instruments an
unmodified MCPServer app (the seed server fixture) in a real subprocess."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import FIXTURES
from forkwatch_instrumentation import session_key
from raw_client import RawClient

BIN = Path(sys.executable).parent / "opentelemetry-instrument"


@pytest.mark.skipif(
    not BIN.exists() and shutil.which("opentelemetry-instrument") is None,
    reason="opentelemetry-instrumentation not installed",
)
def test_opentelemetry_instrument_emits_forkwatch_spans_for_an_unmodified_server():
    env = dict(os.environ)
    env.update(
        {
            "OTEL_TRACES_EXPORTER": "console",
            "OTEL_METRICS_EXPORTER": "none",
            "OTEL_LOGS_EXPORTER": "none",
            "OTEL_SERVICE_NAME": "py-zero-code",
            "OTEL_BSP_SCHEDULE_DELAY": "50",
            "FORKWATCH_SESSION_SALT": "zero",
            "PYTHONUNBUFFERED": "1",
        }
    )
    proc = subprocess.Popen(
        [str(BIN), sys.executable, str(FIXTURES / "seed_server.py"), "--port", "0", "--idle-timeout-s", "30"],
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
        r = c.resume("e99", sid="unknown-session")
        assert r.status == 404
        c.close()
        while not any('"forkwatch.resume"' in x for x in list(out)):
            assert time.monotonic() < deadline, "".join(out)
            time.sleep(0.05)
        text = "".join(out)
        assert '"forkwatch.session.created_by": "initialize"' in text
        assert '"forkwatch.resume.outcome": "rejected_404"' in text
        assert f'"forkwatch.session.key": "{session_key("unknown-session", "zero")}"' in text
        assert '"service.name": "py-zero-code"' in text
    finally:
        proc.terminate()
        proc.wait(15)
        reader.join(5)
