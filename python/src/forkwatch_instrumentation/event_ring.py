"""Recent SSE events of each session, kept until a moment emits them (docs/telemetry.md,
"When event history is emitted"): bounded per session and across all sessions."""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from opentelemetry.context import Context


@dataclass
class BufferedEvent:
    """What an `sse.event` span needs, its attributes computed only if a moment emits it."""

    time_ns: int
    event_id: str
    data: str
    context: Context | None
    extra: dict[str, Any]
    """Attributes known when the event passed (sequence, stream, replayed, delivery, ...)."""


K = TypeVar("K")


class EventRings(Generic[K]):
    """One deque per owner (an incarnation or a client session id), `per_owner` deep (oldest
    overwritten); past `total` events across owners, the owner whose buffer grew least recently loses
    its whole buffer."""

    def __init__(self, per_owner: int, total: int) -> None:
        self.per_owner = per_owner
        self.total = total
        self._rings: OrderedDict[K, deque[BufferedEvent]] = OrderedDict()
        self.count = 0

    def add(self, owner: K, ev: BufferedEvent) -> None:
        if self.per_owner == 0 or self.total == 0:
            return
        ring = self._rings.get(owner)
        if ring is None:
            ring = deque(maxlen=self.per_owner)
            self._rings[owner] = ring
        else:
            self._rings.move_to_end(owner)
        if len(ring) == ring.maxlen:
            self.count -= 1
        ring.append(ev)
        self.count += 1
        while self.count > self.total and self._rings:
            _, dropped = self._rings.popitem(last=False)
            self.count -= len(dropped)

    def take(self, owner: K) -> list[BufferedEvent]:
        """Remove and return the owner's events, oldest first."""
        ring = self._rings.pop(owner, None)
        if ring is None:
            return []
        self.count -= len(ring)
        return list(ring)

    def drop(self, owner: K) -> None:
        self.take(owner)

    def emit_all(self, owner: K, emit: Callable[[BufferedEvent], None]) -> None:
        for ev in self.take(owner):
            emit(ev)
