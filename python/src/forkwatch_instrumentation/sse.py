"""An incremental SSE parser over the bytes of a response body, bounded (docs/telemetry.md)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SseEvent:
    """One dispatched SSE event: its `id:` field (None when absent) and its data lines joined by `\\n`."""

    id: str | None
    data: str
    oversized: bool = False


@dataclass
class SseParser:
    """Feeds body chunks, yields complete events. Lines longer than `max_event_chars` are not kept:
    the event is marked `oversized` and passes unrecorded (the wire is never touched here)."""

    max_event_chars: int = 1 << 20
    _buf: str = ""
    _id: str | None = None
    _data: list[str] = field(default_factory=list)
    _size: int = 0
    _oversized: bool = False
    _pending_cr: bool = False

    def feed(self, chunk: bytes | str) -> list[SseEvent]:
        text = chunk.decode("utf-8", "replace") if isinstance(chunk, (bytes, bytearray)) else chunk
        if self._pending_cr and text.startswith("\n"):
            text = text[1:]
        self._pending_cr = False
        self._buf += text
        out: list[SseEvent] = []
        while True:
            i_n = self._buf.find("\n")
            i_r = self._buf.find("\r")
            cands = [i for i in (i_n, i_r) if i >= 0]
            if not cands:
                break
            i = min(cands)
            line = self._buf[:i]
            step = 1
            if self._buf[i] == "\r":
                if i + 1 < len(self._buf):
                    if self._buf[i + 1] == "\n":
                        step = 2
                else:
                    self._pending_cr = True
            self._buf = self._buf[i + step :]
            ev = self._line(line)
            if ev is not None:
                out.append(ev)
        if len(self._buf) > self.max_event_chars:
            self._oversized = True
            self._buf = ""
        return out

    def _line(self, line: str) -> SseEvent | None:
        if line == "":
            if not self._data and self._id is None and not self._oversized:
                return None
            ev = SseEvent(self._id, "\n".join(self._data), self._oversized)
            self._id, self._data, self._size, self._oversized = None, [], 0, False
            return ev
        if line.startswith(":"):
            return None
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._size += len(value)
            if self._size > self.max_event_chars:
                self._oversized = True
                self._data = []
            elif not self._oversized:
                self._data.append(value)
        elif name == "id" and "\0" not in value:
            self._id = value
        return None
