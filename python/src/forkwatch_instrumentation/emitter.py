"""Safe span emission shared by both sides: the attributes every forkwatch span carries, never a throw."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import SpanKind, Tracer, TracerProvider

from forkwatch_instrumentation.digests import session_key
from forkwatch_instrumentation.semconv import (
    ATTR_GUARDED,
    ATTR_MCP_PROTOCOL_VERSION,
    ATTR_MCP_SESSION_ID,
    ATTR_SCHEMA_VERSION,
    ATTR_SESSION_INCARNATION,
    ATTR_SESSION_INCARNATION_SOURCE,
    ATTR_SESSION_KEY,
    ATTR_SIDE,
    SCHEMA_VERSION,
    Side,
)

logger = logging.getLogger("forkwatch_instrumentation")

INSTRUMENTATION_NAME = "forkwatch_instrumentation"
VERSION = "0.1.0"

AttrValue = str | int | float | bool


def env_salt() -> str:
    """`FORKWATCH_SESSION_SALT`, read when called (default empty)."""
    return os.environ.get("FORKWATCH_SESSION_SALT", "")


def env_bool(name: str, default: bool) -> bool:
    v = os.environ.get(name)
    if v is None or v == "":
        return default
    if v.lower() in ("1", "true"):
        return True
    if v.lower() in ("0", "false"):
        return False
    logger.warning("forkwatch: %s=%r is not 1/true/0/false; using %s", name, v, default)
    return default


def env_int(name: str, default: int) -> int:
    v = os.environ.get(name)
    if v is None or v == "":
        return default
    try:
        n = int(v)
        if n >= 0:
            return n
    except ValueError:
        pass
    logger.warning("forkwatch: %s=%r is not a whole number >= 0; using %s", name, v, default)
    return default


def whole(value: int | None, default: int, name: str) -> int:
    """A bound option: a whole number >= 0, else its default with a warning (never raises)."""
    if value is None:
        return default
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    logger.warning("forkwatch: option %s=%r is not a whole number >= 0; using %s", name, value, default)
    return default


class SpanEmitter:
    """Emits forkwatch spans for one side; counts and swallows every failure of the tracer."""

    def __init__(
        self,
        side: Side,
        tracer_provider: TracerProvider | None,
        salt: str | None,
        record_raw_session_id: bool,
        guarded: bool = False,
    ) -> None:
        self.side: Side = side
        self.salt = env_salt() if salt is None else salt
        self.record_raw_session_id = record_raw_session_id
        self.guarded = guarded
        self.errors = 0
        self._provider = tracer_provider
        self._tracer: Tracer | None = None

    @property
    def tracer(self) -> Tracer:
        if self._tracer is None:
            provider = self._provider if self._provider is not None else trace.get_tracer_provider()
            self._tracer = provider.get_tracer(INSTRUMENTATION_NAME, VERSION)
        return self._tracer

    def force_flush(self, timeout_ms: int) -> None:
        """Export what the provider's processors hold, within `timeout_ms`: the spans of a shutdown
        (every session `server_shutdown`) are emitted in its last moments, and a process ended by its
        signal (uvicorn re-raises SIGTERM once it has served) runs no atexit hook, so a batching
        processor would lose them. A provider without `force_flush` (the API's no-op) is left alone."""
        if timeout_ms <= 0:
            return
        try:
            provider = self._provider if self._provider is not None else trace.get_tracer_provider()
            flush = getattr(provider, "force_flush", None)
            if callable(flush):
                flush(timeout_ms)
        except Exception:
            self.errors += 1
            logger.debug("forkwatch: spans not flushed at shutdown", exc_info=True)

    def key(self, session_id: str) -> str:
        return session_key(session_id, self.salt)

    def common(
        self,
        session_id: str | None,
        incarnation: str | None,
        incarnation_source: str | None,
        protocol_version: str | None = None,
    ) -> dict[str, AttrValue]:
        a: dict[str, AttrValue] = {
            ATTR_SCHEMA_VERSION: SCHEMA_VERSION,
            ATTR_SIDE: self.side,
            ATTR_GUARDED: self.guarded,
        }
        if session_id is not None:
            a[ATTR_SESSION_KEY] = self.key(session_id)
            if self.record_raw_session_id:
                a[ATTR_MCP_SESSION_ID] = session_id
        if incarnation is not None and incarnation_source is not None:
            a[ATTR_SESSION_INCARNATION] = incarnation
            a[ATTR_SESSION_INCARNATION_SOURCE] = incarnation_source
        if protocol_version:
            a[ATTR_MCP_PROTOCOL_VERSION] = protocol_version[:256]
        return a

    def emit(
        self,
        name: str,
        attributes: Mapping[str, Any],
        start_ns: int | None = None,
        end_ns: int | None = None,
        context: Context | None = None,
    ) -> None:
        """One INTERNAL span, child of `context` (else of the active context); never raises."""
        try:
            attrs = {k: v for k, v in attributes.items() if v is not None}
            start = start_ns if start_ns is not None else time.time_ns()
            span = self.tracer.start_span(
                name, context=context, kind=SpanKind.INTERNAL, attributes=attrs, start_time=start
            )
            span.end(end_time=end_ns if end_ns is not None else max(start, time.time_ns()))
        except Exception:  # the host never sees our failures
            self.errors += 1
            logger.debug("forkwatch: span %s not emitted", name, exc_info=True)
