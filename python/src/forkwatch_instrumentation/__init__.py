"""forkwatch instrumentation for the Python `mcp` SDK: session-fork telemetry (docs/telemetry.md)."""

from forkwatch_instrumentation.digests import args_digest, payload_digest, session_key
from forkwatch_instrumentation.server.instrumentation import ServerInstrumentation

__all__ = ["ServerInstrumentation", "args_digest", "payload_digest", "session_key"]
