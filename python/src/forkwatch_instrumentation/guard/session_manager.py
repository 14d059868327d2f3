"""`GuardedSessionManager`: the `mcp` SDK's session manager whose sessions and event logs live and die
together, answering what would otherwise fork (the Python counterpart of `createSessionGuard`)."""

from __future__ import annotations

import json
from typing import Any

from mcp.server.streamable_http import MCP_SESSION_ID_HEADER, StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.types import Message, Receive, Scope, Send

from forkwatch_instrumentation.digests import new_incarnation
from forkwatch_instrumentation.emitter import whole
from forkwatch_instrumentation.guard.guarded_event_store import GuardedEventStore
from forkwatch_instrumentation.semconv import HEADER_SESSION_INCARNATION

SESSION_NOT_FOUND = -32001
EVENT_NOT_IN_LOG = -32002


def _header(scope: Scope, name: bytes) -> str | None:
    return next((v.decode("latin-1") for k, v in scope["headers"] if k == name), None)


async def _json_error(send: Send, status: int, code: int, message: str, data: Any = None) -> None:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class GuardedSessionManager(StreamableHTTPSessionManager):
    """As `StreamableHTTPSessionManager` (same arguments, `event_store` excepted: each session gets a
    `GuardedEventStore` of its own), plus:

    - a fresh incarnation per session, sent as `Mcp-Session-Incarnation` on every response of it;
      event ids `<incarnation>-<seq>`;
    - any request naming an unknown session id: `404`, JSON-RPC `-32001` "Session not found";
    - a `GET` whose `Last-Event-ID` is not in the session's log: `409`, JSON-RPC `-32002` with
      `data.reason` `event_evicted`, `other_incarnation` or `unknown_event` (never an empty replay).

    `max_events_per_session` (1000) and `max_bytes_per_session` (1 MiB of JSON) bound each log.
    """

    def __init__(
        self,
        app: Any,
        *,
        max_events_per_session: int | None = None,
        max_bytes_per_session: int | None = None,
        **kwargs: Any,
    ) -> None:
        kwargs.pop("event_store", None)
        super().__init__(app, **kwargs)
        self.max_events_per_session = whole(max_events_per_session, 1000, "max_events_per_session")
        self.max_bytes_per_session = whole(max_bytes_per_session, 1 << 20, "max_bytes_per_session")
        self._stores: dict[str, GuardedEventStore] = {}

    def _admit_session(self, requestor: Any) -> StreamableHTTPServerTransport | None:
        transport = super()._admit_session(requestor)
        if transport is not None and transport.mcp_session_id is not None:
            store = GuardedEventStore(new_incarnation(), self.max_events_per_session, self.max_bytes_per_session)
            transport._event_store = store
            self._stores[transport.mcp_session_id] = store
        return transport

    async def _handle_stateful_request(self, scope: Scope, receive: Receive, send: Send) -> None:
        # Forget logs of sessions the SDK discarded (reaped, deleted): they live and die together.
        for gone in [sid for sid in self._stores if sid not in self._server_instances]:
            del self._stores[gone]
        session_id = _header(scope, MCP_SESSION_ID_HEADER.lower().encode())
        if session_id is not None and session_id not in self._server_instances:
            await _json_error(send, 404, SESSION_NOT_FOUND, "Session not found")
            return
        cursor = _header(scope, b"last-event-id")
        store = self._stores.get(session_id) if session_id is not None else None
        if cursor is not None and store is not None and scope["method"] == "GET":
            reason = store.why_absent(cursor)
            if reason is not None:
                await _json_error(send, 409, EVENT_NOT_IN_LOG, "Event not in session log", {"reason": reason})
                return

        async def send_with_incarnation(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                sid = session_id or next(
                    (v.decode("latin-1") for k, v in headers if k.lower() == MCP_SESSION_ID_HEADER.lower().encode()),
                    None,
                )
                s = self._stores.get(sid) if sid is not None else None
                if s is not None:
                    headers.append((HEADER_SESSION_INCARNATION.encode(), s.incarnation.encode()))
                    message = {**message, "headers": headers}
            await send(message)

        await super()._handle_stateful_request(scope, receive, send_with_incarnation)
