"""Holds exported spans to docs/telemetry.md, read from the doc itself: span names, the attributes each
may carry and their types, required attributes, string bounds, id shapes."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

DOC = Path(__file__).resolve().parents[2] / "docs" / "telemetry.md"

# What every span of a kind must carry (the doc's tables say what each means; these are the ones a
# detector cannot do without).
REQUIRED: dict[str, set[str]] = {
    "*": {"forkwatch.schema.version", "forkwatch.side"},
    "forkwatch.session.created": {
        "forkwatch.session.key",
        "forkwatch.session.created_by",
        "forkwatch.session.client_supplied_id",
        "http.request.method",
    },
    "forkwatch.session.ended": {"forkwatch.session.key", "forkwatch.session.end_reason"},
    "forkwatch.sse.event": {
        "forkwatch.session.key",
        "forkwatch.sse.event.id",
        "forkwatch.sse.payload.digest",
        "forkwatch.sse.payload.bytes",
        "forkwatch.jsonrpc.kind",
    },
    "forkwatch.resume": {
        "forkwatch.session.key",
        "forkwatch.resume.last_event_id",
        "http.request.method",
        "http.response.status_code",
        "forkwatch.resume.outcome",
    },
    "forkwatch.request.sent": {"mcp.method.name", "jsonrpc.request.id"},
    "forkwatch.request.received": {"mcp.method.name", "jsonrpc.request.id"},
    "forkwatch.request.settled": {
        "mcp.method.name",
        "jsonrpc.request.id",
        "forkwatch.request.outcome",
        "forkwatch.request.duration_ms",
    },
}
_TYPES = {"string": str, "int": int, "bool": bool, "double": float}
_ROW = re.compile(r"^\|\s*(`[^|]*`)\s*\|\s*([a-z]*)\s*\|")
_HEADING = re.compile(r"^#{2,3} ")


def read_schema(doc: str | None = None) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """(attributes every span may carry -> type, span name -> its own attributes -> type ('' = as above))."""
    text = doc if doc is not None else DOC.read_text()
    common: dict[str, str] = {}
    spans: dict[str, dict[str, str]] = {}
    current: list[dict[str, str]] = []
    for line in text.splitlines():
        if _HEADING.match(line):
            if "Attributes on every forkwatch span" in line:
                current = [common]
            elif line.startswith("### `forkwatch."):
                names = re.findall(r"`(forkwatch\.[a-z_.]+)`", line)
                current = [spans.setdefault(n, {}) for n in names]
            else:
                current = []
            continue
        m = _ROW.match(line)
        if m and current:
            for attr in re.findall(r"`([a-z_.]+)`", m.group(1)):
                for table in current:
                    table[attr] = m.group(2)
    return common, spans


def violations(
    name: str,
    attrs: Mapping[str, Any],
    schema: tuple[dict[str, str], dict[str, dict[str, str]]],
    salt_keys: Mapping[str, str] | None = None,
) -> list[str]:
    """Every way one span departs from the doc ([] when none)."""
    common, spans = schema
    out: list[str] = []
    if name not in spans:
        return [f"{name}: not a span of docs/telemetry.md"]
    own = spans[name]
    for req in REQUIRED["*"] | REQUIRED.get(name, set()):
        if req not in attrs:
            out.append(f"{name}: required {req} missing")
    for k, v in attrs.items():
        t = own.get(k, common.get(k))
        if t is None and k not in own and k not in common:
            out.append(f"{name}: {k} is not in its table")
            continue
        py = _TYPES.get(t or "")
        if py is not None and (type(v) is not py and not (py is float and type(v) is int)):
            out.append(f"{name}: {k}={v!r} is not {t}")
        if isinstance(v, str) and len(v) > 256:
            out.append(f"{name}: {k} longer than 256")
    if attrs.get("forkwatch.schema.version") != 1:
        out.append(f"{name}: schema version {attrs.get('forkwatch.schema.version')!r}")
    if attrs.get("forkwatch.side") not in ("client", "server"):
        out.append(f"{name}: side {attrs.get('forkwatch.side')!r}")
    key = attrs.get("forkwatch.session.key")
    if key is not None and not re.fullmatch(r"[0-9a-f]{32}", str(key)):
        out.append(f"{name}: session key {key!r} is not 32 lowercase hex")
    if salt_keys is not None and key is not None and key not in salt_keys.values():
        out.append(f"{name}: session key {key} is not SHA-256(salt || id) of any session id seen")
    inc = attrs.get("forkwatch.session.incarnation")
    if inc is not None and not re.fullmatch(r"[0-9a-f]{16}", str(inc)):
        out.append(f"{name}: incarnation {inc!r} is not 16 lowercase hex")
    digest = attrs.get("forkwatch.sse.payload.digest")
    if digest is not None and not re.fullmatch(r"[0-9a-f]{16}", str(digest)):
        out.append(f"{name}: payload digest {digest!r} is not 16 lowercase hex")
    return out
