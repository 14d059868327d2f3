"""Per-incarnation state of the server instrumentation: one life of a session id on one transport."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.context import Context

from forkwatch_instrumentation.digests import new_incarnation


@dataclass
class PendingRequest:
    """A JSON-RPC request read and not answered yet; emitted as `request.received` only if it can matter."""

    time_ns: int
    attrs: dict[str, Any]
    context: Context | None
    timer: asyncio.TimerHandle | None = None


@dataclass(eq=False)
class Incarnation:
    """One life of `session_id`: from the transport's first request until it is terminated."""

    session_id: str
    protocol_version: str | None = None
    id: str = field(default_factory=new_incarnation)
    source: str = "observed"
    created: bool = False
    created_by_initialize: bool = False
    ended: bool = False
    end_reason: str | None = None
    deleting: bool = False
    live: bool = False
    """A moment happened: events are emitted as they are written from now on."""
    next_seq: int = 1
    seen: OrderedDict[str, int] = field(default_factory=OrderedDict)
    """Event ids sent in this incarnation -> the sequence of their first send (bounded)."""
    stored: OrderedDict[str, str] = field(default_factory=OrderedDict)
    """Event ids this transport's event store minted -> their stream id (bounded): the log."""
    has_store: bool = False
    """The transport has an event store this instrumentation wrapped (so `stored` is its log)."""
    pending: dict[str, PendingRequest] = field(default_factory=dict)
    awaiting: dict[str, tuple[str, int]] = field(default_factory=dict)
    """Requests whose `forkwatch.request.received` went out unanswered -> (method, arrival ns): their
    answer's event is a moment (emitted with the buffer before it), or a later session end would read
    as their orphaning; a client's cancel of one is settled with its method and duration."""
    manager: Any = None

    def remember(self, table: OrderedDict[str, Any], key: str, value: Any, limit: int) -> None:
        table[key] = value
        if len(table) > limit:
            table.popitem(last=False)
