"""`ForkGuard`: the seed's `ResumableStream` checks for one session (port of the TypeScript guard)."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from forkwatch_instrumentation.digests import parse_event_id
from forkwatch_instrumentation.guard.session_fork_error import SessionForkError

HighWaterMark = dict[str, int]


@dataclass
class _Floor:
    seqs: HighWaterMark
    # True: a resumed stream, which may re-send events the client holds (only exact duplicates
    # pass, dropped); False: a new stream, whose events at or below the floor are a regression.
    replay: bool


@dataclass
class _Stream:
    last_seq: int = -1
    last_source: str | None = None
    floor: _Floor | None = None


@dataclass
class ForkGuard:
    """Checks of one session, in the TypeScript `ForkGuard`'s order (packages/instrumentation).

    - `resume()` refuses a resume that would fork and arms the resumed stream: its events at or
      below the cursor must be exact duplicates (same id and payload digest).
    - `open_stream()` arms a new stream with the session's high-water mark when its request was
      sent: ids with a sequence are numbered per session, so its first event must be above it (a
      rehydrated session whose fresh log restarts at `e1`).
    - `accept_event()` runs these checks before dedup; dedup is keyed (session, incarnation, id)
      and drops only an event whose payload digest matches the one accepted under that key.

    Bounds: `max_seen_events` dedup keys (4096), `max_streams` streams (256), oldest forgotten.
    """

    session_id: str
    incarnation: str | None = None
    session_key: str | None = None
    max_seen_events: int = 4096
    max_streams: int = 256
    last_event_id: str | None = None
    _seen: OrderedDict[tuple[str, str], str] = field(default_factory=OrderedDict)
    _streams: OrderedDict[str, _Stream] = field(default_factory=OrderedDict)
    _high: HighWaterMark = field(default_factory=dict)

    def high_water_mark(self) -> HighWaterMark:
        """A copy of the highest sequences accepted on this session, per id shape."""
        return dict(self._high)

    def check_incarnation(self, server_incarnation: str | None, cursor: str | None = None) -> None:
        """The first incarnation announced is adopted; a different one afterwards is a fork."""
        if server_incarnation is None:
            return
        if self.incarnation is None:
            self.incarnation = server_incarnation
        elif server_incarnation != self.incarnation:
            raise SessionForkError("incarnation_changed", self.session_key, cursor or self.last_event_id)

    def resume(
        self,
        last_event_id: str,
        server_session_id: str | None,
        server_incarnation: str | None,
        stream_id: str = "",
    ) -> None:
        """A resume answered `2xx`: refuse it if it would fork, else arm the resumed stream."""
        if server_session_id is not None and server_session_id != self.session_id:
            raise SessionForkError("session_id_changed", self.session_key, last_event_id)
        self.check_incarnation(server_incarnation, last_event_id)
        parsed = parse_event_id(last_event_id)
        stream = self._stream(stream_id)
        if parsed.seq is None or parsed.source is None:
            stream.floor = None
            return
        last = stream.last_seq if parsed.source == stream.last_source else -1
        if parsed.seq < last:
            raise SessionForkError(
                "sequence_regression", self.session_key, last_event_id, f"cursor {parsed.seq} < last seen {last}"
            )
        stream.floor = _Floor({parsed.source: max(parsed.seq, last)}, replay=True)

    def open_stream(self, stream_id: str, floor: HighWaterMark | None = None) -> None:
        """Arms a stream that starts now: its first event with a sequence must be above `floor`
        (the high-water mark when its request was sent; default: now)."""
        seqs = self.high_water_mark() if floor is None else dict(floor)
        self._stream(stream_id).floor = _Floor(seqs, replay=False) if seqs else None

    def accept_event(self, event_id: str, stream_id: str = "", digest: str | None = None) -> bool:
        """False for an exact duplicate (drop it), True otherwise; raises `SessionForkError` on a fork."""
        parsed = parse_event_id(event_id)
        if parsed.incarnation is not None and self.incarnation is not None and parsed.incarnation != self.incarnation:
            raise SessionForkError(
                "incarnation_changed", self.session_key, self.last_event_id, "event id names another incarnation"
            )
        key = (self.incarnation or "", event_id)
        prior = self._seen.get(key)
        same = prior is not None and prior != "" and digest is not None and prior == digest
        stream = self._stream(stream_id)
        floor = stream.floor
        if floor is not None:
            limit = floor.seqs.get(parsed.source) if parsed.source is not None else None
            if parsed.seq is not None and limit is not None and parsed.seq <= limit:
                if floor.replay and same:
                    return False
                where = "the resume cursor" if floor.replay else "the session's high-water mark"
                raise SessionForkError(
                    "sequence_regression",
                    self.session_key,
                    self.last_event_id,
                    f"event {event_id} at or below {where} {limit}",
                )
            stream.floor = None
        if prior is not None:
            if prior != "" and digest is not None and prior != digest:
                raise SessionForkError(
                    "sequence_regression",
                    self.session_key,
                    self.last_event_id,
                    f"event id {event_id} reused with another payload",
                )
            return False
        self._seen[key] = digest or ""
        while len(self._seen) > self.max_seen_events:
            self._seen.popitem(last=False)
        if parsed.seq is not None and parsed.source is not None:
            stream.last_seq = parsed.seq if parsed.source != stream.last_source else max(stream.last_seq, parsed.seq)
            stream.last_source = parsed.source
            self._high[parsed.source] = max(self._high.get(parsed.source, -1), parsed.seq)
        self.last_event_id = event_id
        return True

    def _stream(self, stream_id: str) -> _Stream:
        s = self._streams.get(stream_id)
        if s is None:
            s = self._streams[stream_id] = _Stream()
            while len(self._streams) > self.max_streams:
                self._streams.popitem(last=False)
        else:
            self._streams.move_to_end(stream_id)
        return s
