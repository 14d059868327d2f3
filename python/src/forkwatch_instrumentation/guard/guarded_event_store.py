"""`GuardedEventStore`: one session's bounded event log, ids `<incarnation>-<seq>`."""

from __future__ import annotations

from collections import deque
from typing import Any

from mcp.server.streamable_http import EventCallback, EventMessage, EventStore

from forkwatch_instrumentation.digests import format_event_id, parse_event_id


class GuardedEventStore(EventStore):
    """The log of one session's life: ids `<incarnation>-<seq>` (seq from 1), at most `max_events`
    events and `max_bytes` bytes of JSON kept, oldest evicted. `why_absent(id)` says why a cursor is
    not in it (`event_evicted`, `other_incarnation`, `unknown_event`), None when it is."""

    def __init__(self, incarnation: str, max_events: int = 1000, max_bytes: int = 1 << 20) -> None:
        self.incarnation = incarnation
        self.max_events = max_events
        self.max_bytes = max_bytes
        self._seq = 0
        self._bytes = 0
        self._events: deque[tuple[int, str, Any, int]] = deque()
        self._index: dict[str, int] = {}

    async def store_event(self, stream_id: str, message: Any) -> str:
        self._seq += 1
        size = len(message.model_dump_json(by_alias=True, exclude_unset=True)) if message is not None else 0
        self._events.append((self._seq, stream_id, message, size))
        self._index[format_event_id(self.incarnation, self._seq)] = self._seq
        self._bytes += size
        while self._events and (len(self._events) > self.max_events or self._bytes > self.max_bytes):
            seq, _, _, dropped = self._events.popleft()
            self._bytes -= dropped
            self._index.pop(format_event_id(self.incarnation, seq), None)
        return format_event_id(self.incarnation, self._seq)

    def why_absent(self, event_id: str) -> str | None:
        if event_id in self._index:
            return None
        parsed = parse_event_id(event_id)
        if parsed.incarnation is not None and parsed.incarnation != self.incarnation:
            return "other_incarnation"
        if parsed.incarnation == self.incarnation and parsed.seq is not None and parsed.seq <= self._seq:
            return "event_evicted"
        return "unknown_event"

    async def replay_events_after(self, last_event_id: str, send_callback: EventCallback) -> str | None:
        seq = self._index.get(last_event_id)
        if seq is None:
            return None
        at = next(i for i, e in enumerate(self._events) if e[0] == seq)
        stream_id = self._events[at][1]
        for s, sid, message, _ in list(self._events)[at + 1 :]:
            if sid == stream_id and message is not None:
                await send_callback(EventMessage(message, format_event_id(self.incarnation, s)))
        return stream_id
