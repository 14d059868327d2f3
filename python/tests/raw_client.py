"""A scripted MCP client over raw HTTP (httpx2, mcp's own HTTP client): exact control of session ids,
`Last-Event-ID` and what is read, for scenarios the SDK client cannot be made to play."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx2

PROTOCOL = "2025-11-25"


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    events: list[tuple[str | None, str]] = field(default_factory=list)
    """(id, data) of each SSE event read."""
    body: Any = None


def _events(text: str) -> list[tuple[str | None, str]]:
    out: list[tuple[str | None, str]] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        eid: str | None = None
        data: list[str] = []
        for line in block.split("\n"):
            if line.startswith("id:"):
                eid = line[3:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].lstrip(" "))
        if eid is not None or data:
            out.append((eid, "\n".join(data)))
    return out


class RawClient:
    def __init__(self, url: str) -> None:
        self.url = url
        self.http = httpx2.Client(timeout=20)
        self.session_id: str | None = None
        self.next_id = 1

    def close(self) -> None:
        self.http.close()

    def _headers(self, sid: str | None = None, last: str | None = None) -> dict[str, str]:
        h = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
        sid = sid if sid is not None else self.session_id
        if sid is not None:
            h["mcp-session-id"] = sid
            h["mcp-protocol-version"] = PROTOCOL
        if last is not None:
            h["last-event-id"] = last
        return h

    def post(self, message: dict[str, Any], sid: str | None = None, max_events: int | None = None) -> Answer:
        """POST one message; read its SSE answer (all of it, or only `max_events` events: a broken stream)."""
        with self.http.stream("POST", self.url, headers=self._headers(sid), content=json.dumps(message)) as r:
            ans = Answer(r.status_code, {k.lower(): v for k, v in r.headers.items()})
            if r.headers.get("content-type", "").startswith("text/event-stream"):
                buf = ""
                for chunk in r.iter_text():
                    buf += chunk
                    ans.events = _events(buf.rsplit("\n\n", 1)[0] if "\n\n" in buf.replace("\r\n", "\n") else "")
                    if max_events is not None and len([e for e in ans.events if e[1]]) >= max_events:
                        break
                ans.events = _events(buf) if max_events is None else ans.events
            else:
                text = r.read().decode()
                ans.body = json.loads(text) if text else None
        return ans

    def initialize(self) -> Answer:
        ans = self.post(
            {
                "jsonrpc": "2.0",
                "id": self._id(),
                "method": "initialize",
                "params": {
                    "protocolVersion": PROTOCOL,
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "1"},
                },
            }
        )
        self.session_id = ans.headers.get("mcp-session-id")
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return ans

    def call_tool(
        self, name: str, args: dict[str, Any], token: str | None = None, max_events: int | None = None
    ) -> Answer:
        params: dict[str, Any] = {"name": name, "arguments": args}
        if token is not None:
            params["_meta"] = {"progressToken": token}
        return self.post(
            {"jsonrpc": "2.0", "id": self._id(), "method": "tools/call", "params": params}, max_events=max_events
        )

    def resume(self, last: str, sid: str | None = None, max_events: int = 0) -> Answer:
        """GET with `Last-Event-ID`; an SSE answer is read for `max_events` events with data, then dropped."""
        h = self._headers(sid, last)
        h["accept"] = "text/event-stream"
        with self.http.stream("GET", self.url, headers=h) as r:
            ans = Answer(r.status_code, {k.lower(): v for k, v in r.headers.items()})
            if r.headers.get("content-type", "").startswith("text/event-stream"):
                buf = ""
                if max_events > 0:
                    for chunk in r.iter_text():
                        buf += chunk
                        ans.events = _events(buf)
                        if len([e for e in ans.events if e[1]]) >= max_events:
                            break
            else:
                text = r.read().decode()
                ans.body = json.loads(text) if text else None
        return ans

    def delete(self) -> int:
        return self.http.delete(self.url, headers=self._headers()).status_code

    def _id(self) -> int:
        self.next_id += 1
        return self.next_id - 1
