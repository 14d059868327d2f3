import { schemaKeyIndex } from '../model/schema-keys.js';
import type { SpanView } from './span-view.js';
import {
  ATTR_JSONRPC_KIND,
  ATTR_PROGRESS_TOKEN,
  SPAN_REQUEST_RECEIVED,
  SPAN_REQUEST_SENT,
  SPAN_REQUEST_SETTLED,
  SPAN_RESUME,
  SPAN_SSE_EVENT,
} from '@forkwatch/instrumentation/semconv';

const PROGRESS_TOKEN = schemaKeyIndex(ATTR_PROGRESS_TOKEN);
const JSONRPC_KIND = schemaKeyIndex(ATTR_JSONRPC_KIND);

/**
 * Keyless spans (stateless servers) can only matter for orphans and resume counts; keeping the
 * rest would fill the session table with one pseudo session per trace and evict real sessions.
 */
export function usefulWithoutSession(span: SpanView): boolean {
  switch (span.name) {
    case SPAN_REQUEST_SENT:
    case SPAN_REQUEST_RECEIVED:
    case SPAN_REQUEST_SETTLED:
      return span.get(PROGRESS_TOKEN) !== undefined;
    case SPAN_SSE_EVENT:
      return span.get(JSONRPC_KIND) === 'response' || span.get(JSONRPC_KIND) === 'error';
    case SPAN_RESUME:
      return true;
    default:
      return false;
  }
}
