"""Spans as OTLP JSON lines (one ExportTraceServiceRequest per line, as the Collector's file exporter
writes): what `forkwatch analyze` reads."""

from __future__ import annotations

from collections.abc import Sequence

from google.protobuf.json_format import MessageToJson
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan


def otlp_json_line(spans: Sequence[ReadableSpan]) -> str:
    return MessageToJson(encode_spans(spans), indent=None)
