/** A span attribute value after OTLP decoding; arrays and maps are flattened to JSON strings. */
export type AttrValue = string | number | boolean;

import type { Side } from '@forkwatch/instrumentation/semconv';

/** Which side of the MCP connection emitted a span (attribute `forkwatch.side`). */
export type { Side };

/**
 * One forkwatch span as the OTLP decoders hand it to the correlator. Foreign spans (names not
 * starting with `forkwatch.`) never become a SpanRecord.
 */
export interface SpanRecord {
  /** 32 lowercase hex chars. */
  traceId: string;
  /** 16 lowercase hex chars. */
  spanId: string;
  /** 16 lowercase hex chars, or '' for a root span. */
  parentSpanId: string;
  name: string;
  /** Start time, Unix epoch milliseconds (fractional part kept). */
  startMs: number;
  /** End time, Unix epoch milliseconds. */
  endMs: number;
  /** Resource attribute `service.name`, or 'unknown_service'. */
  service: string;
  attributes: Record<string, AttrValue>;
}
