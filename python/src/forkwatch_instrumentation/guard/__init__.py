"""The guard: `ClientGuard` and `SessionForkError` (client), `GuardedSessionManager` (server)."""

from forkwatch_instrumentation.guard.client_guard import ClientGuard
from forkwatch_instrumentation.guard.connect_guarded import GuardedClient, connect_guarded
from forkwatch_instrumentation.guard.fork_guard import ForkGuard
from forkwatch_instrumentation.guard.session_fork_error import SessionForkError

__all__ = ["ClientGuard", "ForkGuard", "GuardedClient", "SessionForkError", "connect_guarded"]
