"""Session keys, payload and argument digests, incarnations and event-id shapes (docs/telemetry.md)."""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from functools import lru_cache
from typing import Any, NamedTuple

from forkwatch_instrumentation.semconv import MAX_STRING_CHARS

SESSION_KEY_HEX_CHARS = 32
PAYLOAD_DIGEST_HEX_CHARS = 16


@lru_cache(maxsize=4096)
def session_key(session_id: str, salt: str) -> str:
    """`forkwatch.session.key`: first 32 hex chars of SHA-256(salt || session id), UTF-8, no separator.

    Every client and server of a fleet must share the salt so both derive the same key (the TS rule).
    """
    h = hashlib.sha256(salt.encode("utf-8"))
    h.update(session_id.encode("utf-8", "surrogatepass"))
    return h.hexdigest()[:SESSION_KEY_HEX_CHARS]


def payload_digest(data: str) -> str:
    """`forkwatch.sse.payload.digest`: first 16 hex chars of SHA-256 of the SSE data field (UTF-8)."""
    return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()[:PAYLOAD_DIGEST_HEX_CHARS]


def _canonical(v: Any, depth: int) -> str:
    if isinstance(v, dict):
        if depth > 32:
            return "{…}"
        items = sorted((k, x) for k, x in v.items() if isinstance(k, str))
        return "{" + ",".join(f"{json.dumps(k, ensure_ascii=False)}:{_canonical(x, depth + 1)}" for k, x in items) + "}"
    if isinstance(v, list):
        return "[…]" if depth > 32 else "[" + ",".join(_canonical(x, depth + 1) for x in v) + "]"
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def args_digest(params: Any) -> str:
    """`forkwatch.request.args_digest`: SHA-256 of the canonical JSON of `params` without `_meta`, 16 hex."""
    p = params if params is not None else {}
    if isinstance(p, dict) and "_meta" in p:
        p = {k: x for k, x in p.items() if k != "_meta"}
    return hashlib.sha256(_canonical(p, 0).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def new_incarnation() -> str:
    """A new incarnation nonce: 16 lowercase hex characters from the CSPRNG."""
    return secrets.token_hex(8)


def cut(s: str) -> str:
    """Cut a string attribute to 256 UTF-16 code units (Python strings count code points: close enough
    for BMP text; astral characters count one here and two in UTF-16, so cut at 256 code points or
    fewer)."""
    if len(s) <= MAX_STRING_CHARS // 2:
        return s
    units = 0
    for i, ch in enumerate(s):
        units += 2 if ord(ch) > 0xFFFF else 1
        if units > MAX_STRING_CHARS:
            return s[:i]
    return s


_GUARDED_ID = re.compile(r"([0-9a-f]{16})-([0-9]{1,15})")
_COUNTER_ID = re.compile(r"[A-Za-z_-]{0,16}([0-9]{1,15})")


class ParsedEventId(NamedTuple):
    seq: int | None
    source: str | None
    """`server` for a guarded id `<incarnation>-<seq>`, `counter` for a plain counter, None otherwise."""
    incarnation: str | None


_NO_SEQUENCE = ParsedEventId(None, None, None)


def parse_event_id(event_id: str) -> ParsedEventId:
    """What an event id tells of its sequence: only guarded ids and plain counters are trusted."""
    if len(event_id) > 32:
        return _NO_SEQUENCE
    m = _GUARDED_ID.fullmatch(event_id)
    if m:
        return ParsedEventId(int(m.group(2)), "server", m.group(1))
    m = _COUNTER_ID.fullmatch(event_id)
    if m:
        return ParsedEventId(int(m.group(1)), "counter", None)
    return _NO_SEQUENCE


def format_event_id(incarnation: str, seq: int) -> str:
    """Event id of a guarded event store: `<incarnation>-<seq>`."""
    return f"{incarnation}-{seq}"
