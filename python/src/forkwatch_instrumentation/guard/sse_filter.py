"""An SSE body filter for the client guard: whole event blocks checked, duplicates dropped."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx2

from forkwatch_instrumentation.emitter import logger

_BLOCK_END = re.compile(r"\r\n\r\n|\n\n|\r\r")

#: Decides one event block: `(event_id, data)` -> keep it. Raises `SessionForkError` on a fork.
BlockCheck = Callable[[str | None, str], bool]


def _fields(block: str) -> tuple[str | None, str]:
    event_id: str | None = None
    data: list[str] = []
    for line in re.split(r"\r\n|\n|\r", block):
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "id":
            event_id = value
        elif name == "data":
            data.append(value)
    return event_id, "\n".join(data)


class FilteredSseStream(httpx2.AsyncByteStream):
    """Passes whole event blocks on (`check` says which), ends the stream quietly once `check` raises
    (`on_fork` is told), and reports through `on_end(events_seen)` that the body ended by itself.
    Blocks longer than `max_event_chars` pass unchecked. Never raises an error of its own."""

    def __init__(
        self,
        inner: Any,
        check: BlockCheck,
        on_fork: Callable[[Exception], None],
        on_end: Callable[[int], None],
        max_event_chars: int,
    ) -> None:
        self._inner = inner
        self._check = check
        self._on_fork = on_fork
        self._on_end = on_end
        self._max = max_event_chars
        self.events = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        buf = ""
        async for chunk in self._inner:
            buf += chunk.decode("utf-8", "replace") if isinstance(chunk, bytes) else str(chunk)
            out: list[str] = []
            while True:
                m = _BLOCK_END.search(buf)
                if m is None:
                    if len(buf) > self._max:  # too large to inspect: passed through as is
                        out.append(buf)
                        buf = ""
                    break
                block, buf = buf[: m.end()], buf[m.end() :]
                try:
                    keep = self._keep(block)
                except Exception as err:
                    from forkwatch_instrumentation.guard.session_fork_error import SessionForkError

                    if not isinstance(err, SessionForkError):
                        logger.debug("forkwatch: guard check failed", exc_info=True)
                        out.append(block)
                        continue
                    if out:
                        yield "".join(out).encode("utf-8")
                    self._on_fork(err)
                    return
                if keep:
                    out.append(block)
            if out:
                yield "".join(out).encode("utf-8")
        if buf:
            yield buf.encode("utf-8")
        self._on_end(self.events)

    def _keep(self, block: str) -> bool:
        event_id, data = _fields(block)
        if event_id is None and not data:
            return True  # a comment or a bare retry: not an event
        self.events += 1
        return self._check(event_id, data)

    async def aclose(self) -> None:
        await self._inner.aclose()
