"""`SessionForkError`: what a guard raises instead of letting a session fork silently."""

from __future__ import annotations

from typing import Literal

ForkKind = Literal[
    "session_id_changed", "incarnation_changed", "replay_gap", "sequence_regression", "session_not_found"
]

_MESSAGES: dict[str, str] = {
    "session_id_changed": "the server answered under another session id: refusing to adopt a fork",
    "incarnation_changed": "the session was reincarnated: its prior event log is gone",
    "replay_gap": "Last-Event-ID is absent from the server log: a replay would be dropped",
    "sequence_regression": "event sequence went backwards on the same session: silent fork",
    "session_not_found": "the server no longer knows the session: re-initialize",
}

#: JSON-RPC error code of the error a guard delivers to a pending request it fails (the SDK's
#: session raises it as its own error type; `ClientGuard.guarded` turns it back into this class).
FORK_ERROR_CODE = -32003


class SessionForkError(Exception):
    """Raised when a resume or response would silently fork a session instead of continuing it.

    `code` is always `FORKWATCH_ERR_SESSION_FORK` (docs/errors.md); `kind` says which check failed;
    `session_key` is the session's `forkwatch.session.key` (never the raw id); `last_event_id` the
    client's cursor at the time, when it had one.
    """

    code = "FORKWATCH_ERR_SESSION_FORK"

    def __init__(
        self,
        kind: ForkKind,
        session_key: str | None = None,
        last_event_id: str | None = None,
        detail: str | None = None,
    ) -> None:
        message = _MESSAGES[kind]
        super().__init__(f"{message} ({detail})" if detail else message)
        self.kind: ForkKind = kind
        self.session_key = session_key
        self.last_event_id = last_event_id
