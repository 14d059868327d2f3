"""Client-side state: per session id (what was received, the incarnation held) and per request."""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.context import Context

from forkwatch_instrumentation.digests import _canonical


@dataclass(eq=False)
class ClientSessionState:
    session_id: str
    incarnation: str | None = None
    protocol_version: str | None = None
    live: bool = False
    """A moment happened on this session id: events are emitted as they arrive, with their delivery."""
    seen: OrderedDict[str, str] = field(default_factory=OrderedDict)
    """Event ids received on this session id -> the stream they came on (bounded)."""


@dataclass(eq=False)
class SentRequest:
    """A request written on the wire, awaiting its settlement."""

    session_id: str | None
    time_ns: int
    t0: float
    attrs: dict[str, Any]
    context: Context | None
    progress_token: str | None
    progress_count: int = 0
    sent_emitted: bool = False
    timer: asyncio.TimerHandle | None = None


@dataclass(eq=False)
class AwaitingDelivery:
    """A wire event whose delivery to the SDK is not decided yet."""

    session_id: str
    fingerprint: tuple[Any, ...] | None
    time_ns: int
    event_id: str
    data: str
    extra: dict[str, Any]
    context: Context | None
    timer: asyncio.TimerHandle | None = None


def _norm(v: Any) -> Any:
    # The SDK's models turn a wire `1` into `1.0` (and back): compare numbers by value.
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, dict):
        return {k: _norm(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_norm(x) for x in v]
    return v


def fingerprint(msg: Any) -> tuple[Any, ...] | None:
    """What identifies a JSON-RPC message both on the wire and once the SDK decoded it."""
    if not isinstance(msg, dict):
        return None
    if "method" in msg:
        if msg.get("id") is not None:
            return ("q", str(msg["id"]), msg["method"])
        return ("n", msg["method"], _canonical(_norm(msg.get("params") or {}), 0))
    if "result" in msg or "error" in msg:
        # Kind included: an error the SDK synthesizes for a call whose stream ended (no wire event)
        # must not match the result of the same id that the app's dedup dropped.
        return ("r", str(msg.get("id")), "e" if "error" in msg else "r")
    return None


def fingerprint_of_data(data: str) -> tuple[Any, ...] | None:
    try:
        return fingerprint(json.loads(data))
    except (ValueError, RecursionError):
        return None
