"""Server side: `ServerInstrumentation` for the `mcp` SDK's Streamable HTTP session manager."""

from forkwatch_instrumentation.server.instrumentation import ServerInstrumentation, resume_outcome

__all__ = ["ServerInstrumentation", "resume_outcome"]
