"""Client side: `ClientInstrumentation` for the `mcp` SDK's Streamable HTTP client."""

from forkwatch_instrumentation.client.instrumentation import ClientInstrumentation

__all__ = ["ClientInstrumentation"]
