"""The guard: `ClientGuard` and `SessionForkError` (client), `GuardedSessionManager` (server)."""

from forkwatch_instrumentation.guard.client_guard import ClientGuard
from forkwatch_instrumentation.guard.connect_guarded import GuardedClient, connect_guarded
from forkwatch_instrumentation.guard.fork_guard import ForkGuard
from forkwatch_instrumentation.guard.guarded_event_store import GuardedEventStore
from forkwatch_instrumentation.guard.session_fork_error import SessionForkError
from forkwatch_instrumentation.guard.session_manager import GuardedSessionManager

__all__ = [
    "ClientGuard",
    "ForkGuard",
    "GuardedClient",
    "GuardedEventStore",
    "GuardedSessionManager",
    "SessionForkError",
    "connect_guarded",
]
