"""What a JSON-RPC message tells the telemetry: kind, id, method, progress token, tool name."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from forkwatch_instrumentation.digests import cut


@dataclass(frozen=True)
class MessageInfo:
    kind: str
    """`request`, `notification`, `response`, `error` or `none`."""
    id: str | None = None
    method: str | None = None
    progress_token: str | None = None
    """`params._meta.progressToken` of a request, `params.progressToken` of a progress notification."""
    tool_name: str | None = None
    params: Any = None
    meta: Any = None
    result_meta: Any = None


NONE = MessageInfo("none")


def _id(v: Any) -> str | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (str, int, float)):
        return cut(str(v) if not isinstance(v, float) or not v.is_integer() else str(int(v)))
    return None


def cancelled_request_id(params: Any) -> str | None:
    """`params.requestId` of a `notifications/cancelled`, in the form request ids are recorded; or None."""
    return _id(params.get("requestId")) if isinstance(params, dict) else None


def _token(v: Any) -> str | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (str, int, float)):
        return cut(str(v))
    return None


def info_of(msg: Any) -> MessageInfo:
    """Classify one decoded JSON-RPC message (never raises)."""
    if not isinstance(msg, dict):
        return NONE
    method = msg.get("method")
    params = msg.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(method, str):
        if "id" in msg and msg["id"] is not None:
            token = _token(meta.get("progressToken")) if isinstance(meta, dict) else None
            tool = params.get("name") if method == "tools/call" and isinstance(params, dict) else None
            return MessageInfo(
                "request",
                _id(msg["id"]),
                cut(method),
                token,
                cut(tool) if isinstance(tool, str) else None,
                params,
                meta,
            )
        token = None
        if method == "notifications/progress" and isinstance(params, dict):
            token = _token(params.get("progressToken"))
        return MessageInfo("notification", None, cut(method), token, None, params, meta)
    if "error" in msg:
        return MessageInfo("error", _id(msg.get("id")))
    if "result" in msg:
        result = msg.get("result")
        rmeta = result.get("_meta") if isinstance(result, dict) else None
        return MessageInfo("response", _id(msg.get("id")), result_meta=rmeta)
    return NONE


def parse_messages(text: str) -> list[MessageInfo]:
    """The messages of a body or SSE data field: one object or a batch; [] when not JSON."""
    if not text:
        return []
    try:
        v = json.loads(text)
    except (ValueError, RecursionError):
        return []
    if isinstance(v, list):
        return [info_of(x) for x in v]
    return [info_of(v)]
