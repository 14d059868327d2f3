"""What observe_manager puts in place of a manager's session table and a transport's event store."""

from __future__ import annotations

import contextlib
import weakref
from typing import TYPE_CHECKING, Any

from forkwatch_instrumentation.server.state import Incarnation

if TYPE_CHECKING:
    from forkwatch_instrumentation.server.instrumentation import ServerInstrumentation


class ObservedTransports(dict[str, Any]):
    """The manager's `_server_instances`: observes every transport registered in it."""

    def __init__(self, inst: ServerInstrumentation, manager: Any, initial: dict[str, Any]) -> None:
        super().__init__(initial)
        self._inst = inst
        self._manager = weakref.ref(manager)
        for t in initial.values():
            inst.observe_transport(t, manager)

    def __setitem__(self, key: str, value: Any) -> None:
        self._inst.observe_transport(value, self._manager())
        super().__setitem__(key, value)


class ObservedEventStore:
    """Wraps a transport's `EventStore`: which ids this incarnation's log holds, and on which stream."""

    def __init__(self, inner: Any, inc: Incarnation, limit: int) -> None:
        self.inner = inner
        self.inc = inc
        self.limit = limit

    async def store_event(self, stream_id: Any, message: Any) -> Any:
        event_id = await self.inner.store_event(stream_id, message)
        with contextlib.suppress(Exception):
            self.inc.remember(self.inc.stored, str(event_id), str(stream_id), self.limit)
        return event_id

    async def replay_events_after(self, last_event_id: Any, send_callback: Any) -> Any:
        return await self.inner.replay_events_after(last_event_id, send_callback)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)
