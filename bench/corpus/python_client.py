"""The corpus's Python client (`python-instrumented`, `python-guarded`): the seed app's script
(src/demo/seed-scenario.ts) with the `mcp` SDK's `ClientSession` over streamable HTTP, instrumented
with forkwatch_instrumentation's `ClientInstrumentation`, spans sent as OTLP/HTTP JSON to the cell's
capture sink. The orchestrator (bench/corpus/python-client-scenario.ts) owns the network (a wire tap
and the fault proxy in front of `--url`) and says when the app retries:

- `--kind instrumented`: the stock app, as the TypeScript seed's: `ClientSession` over
  `streamable_http_client`, with the seed app's naive dedup (drops an SSE event whose
  `(session id, event id)` it has passed on) *above* the instrumentation's wire tap and *below*
  `attach`, so a dropped event is one the instrumentation saw on the wire and never delivered.
- `--kind guarded`: `connect_guarded` (the package's client guard, the instrumentation inside it), no
  app dedup (the guard dedups exact duplicates itself), as the TypeScript `connectGuarded`.

Script: initialize; call 1 (`slow_report`, a progress callback, so a progressToken); then reads a
line on stdin: `retry` (the partition happened and the SDK's resume was answered, or call 1 failed):
call 2 when call 1 has no result; `end`: no retry. Waits for every call (each bounded by
`--request-timeout-s`), lets the SDK's courtesy cancel out, waits for the instrumentation's delivery
verdicts (bounded), flushes, prints one JSON line on stdout:
`{"calls": [{"attempt", "outcome": "result"|"timeout"|"error", "progress", "started_ms", "settled_ms",
"error": {...}}], "dropped_by_dedup": [{"session_id", "event_id"}], "forks": [...]}`. Progress lines
`{"settled": n, "outcome": ...}` come before it, and `{"initialized": true}`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2

# The JSON exporter of the corpus's Python server (OTLP/HTTP JSON, what the capture sink keeps).
sys.path.insert(0, str(Path(__file__).resolve().parent))

from forkwatch_instrumentation.client import ClientInstrumentation
from forkwatch_instrumentation.guard import ClientGuard, SessionForkError, connect_guarded
from forkwatch_instrumentation.guard.sse_filter import FilteredSseStream
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from python_inprocess_server import JsonSpanExporter

# The SDK's own request timeout (mcp_types.REQUEST_TIMEOUT): the call waited and was never answered.
REQUEST_TIMEOUT = -32001


class NaiveDedup(httpx2.AsyncBaseTransport):
    """The seed app's dedup (src/demo/naive-dedup.ts): drops any SSE event whose
    `(session id, event id)` it has passed on, whatever the session's life; records each drop."""

    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self._inner = inner
        self.seen: set[tuple[str, str]] = set()
        self.dropped: list[dict[str, str]] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        if not response.headers.get("content-type", "").startswith("text/event-stream"):
            return response
        sid = response.headers.get("mcp-session-id") or request.headers.get("mcp-session-id") or ""

        def keep(event_id: str | None, data: str) -> bool:
            if event_id is None:
                return True
            if (sid, event_id) in self.seen:
                self.dropped.append({"session_id": sid, "event_id": event_id})
                return False
            self.seen.add((sid, event_id))
            return True

        stream = FilteredSseStream(response.stream, keep, lambda _e: None, lambda _n: None, 1 << 20)
        return httpx2.Response(
            response.status_code,
            headers=response.headers,
            stream=stream,
            request=request,
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


def timed_out(err: BaseException) -> bool:
    """The SDK's own request timeout (`MCPError(REQUEST_TIMEOUT, "Request 'tools/call' timed out")`). The
    code alone does not tell it: a server's `404` body `{"code": -32001, "message": "Session not found"}`
    (the TypeScript SDK's) reaches the app as an `MCPError` with the same code."""
    return (
        getattr(err, "code", None) == REQUEST_TIMEOUT
        and "timed out" in str(err)
        and not isinstance(err, SessionForkError)
    )


def emit(obj: dict[str, Any]) -> None:
    print(json.dumps(obj), flush=True)


def describe(err: BaseException) -> dict[str, Any]:
    code = getattr(err, "code", None)
    out: dict[str, Any] = {"name": type(err).__name__, "message": str(err)[:300]}
    if isinstance(code, int):
        out["code"] = code
    kind = getattr(err, "kind", None)
    if isinstance(kind, str):
        out["kind"] = kind
    return out


async def read_command() -> str:
    line = await anyio.to_thread.run_sync(sys.stdin.readline)
    return line.strip() or "end"


async def main(args: argparse.Namespace) -> dict[str, Any]:
    provider = TracerProvider(resource=Resource.create({"service.name": args.service}))
    provider.add_span_processor(
        BatchSpanProcessor(JsonSpanExporter(f"{args.otlp_url}/v1/traces"), schedule_delay_millis=100)
    )
    # The TypeScript seed's delivery timeout (250 ms at scale 1, `deliveryTimeoutMs`): a wire event not
    # delivered by then is reported `dropped` while the run lasts.
    ci = ClientInstrumentation(
        tracer_provider=provider, salt=args.salt, request_span_delay_ms=0, delivery_timeout_ms=args.delivery_timeout_ms
    )
    # Times in ms since the run began (the orchestrator's clock, `--t0-epoch-ms`), as the wire tap's.
    ms = lambda: round(time.time() * 1000 - args.t0_epoch_ms)  # noqa: E731
    calls: list[dict[str, Any]] = []
    forks: list[dict[str, Any]] = []
    dedup: NaiveDedup | None = None

    async def call(invoke: Any, attempt: int) -> None:
        rec: dict[str, Any] = {"attempt": attempt, "outcome": "pending", "progress": 0, "started_ms": ms()}
        calls.append(rec)

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            rec["progress"] += 1

        try:
            await invoke(
                "slow_report",
                {"topic": f"attempt {attempt}"},
                read_timeout_seconds=args.request_timeout_s,
                progress_callback=on_progress,
            )
            rec["outcome"] = "result"
        except Exception as err:
            rec["error"] = describe(err)
            if isinstance(err, SessionForkError):
                forks.append({"kind": err.kind, "message": str(err)[:300], "at_ms": ms()})
            rec["outcome"] = "timeout" if timed_out(err) else "error"
        rec["settled_ms"] = ms()
        emit({"settled": attempt, "outcome": rec["outcome"]})

    async def script(invoke: Any) -> None:
        emit({"initialized": True})
        async with anyio.create_task_group() as tg:
            tg.start_soon(call, invoke, 1)
            command = await read_command()
            if command == "retry" and calls[0]["outcome"] in ("pending", "error"):
                tg.start_soon(call, invoke, 2)
        # The SDK's courtesy cancel after a timeout goes out before the app goes on (as the seed's drain).
        await anyio.sleep(0.2)
        # Until every wire event has its delivery verdict (bounded): then the spans say `dropped`.
        with anyio.move_on_after(3):
            while ci._awaiting:
                await anyio.sleep(0.05)

    try:
        with anyio.fail_after(args.max_run_s):
            if args.kind == "guarded":
                guard = ClientGuard(tracer_provider=provider, salt=args.salt)
                async with connect_guarded(args.url, guard=guard, instrumentation=ci) as client:
                    await script(client.call_tool)
            else:
                dedup = NaiveDedup(ci.wrap_transport(httpx2.AsyncHTTPTransport()))
                http = httpx2.AsyncClient(transport=dedup, timeout=30)
                async with http, streamable_http_client(args.url, http_client=http) as (read, write):
                    async with ClientSession(ci.attach(read), write) as session:
                        await session.initialize()
                        await script(session.call_tool)
    except BaseException as err:
        if isinstance(err, SessionForkError):
            forks.append({"kind": err.kind, "message": str(err)[:300], "at_ms": ms()})
        else:
            print(f"client block ended: {type(err).__name__}: {str(err)[:300]}", file=sys.stderr, flush=True)
    ci.flush()
    provider.force_flush()
    provider.shutdown()
    return {"calls": calls, "dropped_by_dedup": dedup.dropped if dedup is not None else None, "forks": forks}


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True, help="the MCP endpoint (the corpus's wire tap in front of the fault proxy)")
    ap.add_argument("--kind", choices=("instrumented", "guarded"), required=True)
    ap.add_argument("--otlp-url", required=True, help="OTLP/HTTP base URL; spans go to <url>/v1/traces as JSON")
    ap.add_argument("--service", required=True, help="service.name of the spans")
    ap.add_argument("--salt", default="")
    ap.add_argument("--request-timeout-s", type=float, default=3.0)
    ap.add_argument("--delivery-timeout-ms", type=int, default=500)
    ap.add_argument("--max-run-s", type=float, default=40.0)
    ap.add_argument("--t0-epoch-ms", type=float, default=time.time() * 1000, help="the run's start (epoch ms)")
    emit(anyio.run(main, ap.parse_args()))
