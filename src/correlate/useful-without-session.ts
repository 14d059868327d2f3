import type { SpanRecord } from '../model/span-record.js';
import {
  ATTR_JSONRPC_KIND,
  ATTR_PROGRESS_TOKEN,
  SPAN_REQUEST_RECEIVED,
  SPAN_REQUEST_SENT,
  SPAN_REQUEST_SETTLED,
  SPAN_RESUME,
  SPAN_SSE_EVENT,
} from '@forkwatch/instrumentation/semconv';

/**
 * Keyless spans (stateless servers) can only matter for orphans and resume counts; keeping the
 * rest would fill the session table with one pseudo session per trace and evict real sessions.
 */
export function usefulWithoutSession(span: SpanRecord): boolean {
  const a = span.attributes;
  switch (span.name) {
    case SPAN_REQUEST_SENT:
    case SPAN_REQUEST_RECEIVED:
    case SPAN_REQUEST_SETTLED:
      return a[ATTR_PROGRESS_TOKEN] !== undefined;
    case SPAN_SSE_EVENT:
      return a[ATTR_JSONRPC_KIND] === 'response' || a[ATTR_JSONRPC_KIND] === 'error';
    case SPAN_RESUME:
      return true;
    default:
      return false;
  }
}
