/**
 * Everything the proxy borrows from the instrumentation and the telemetry schema, in one place:
 * when the instrumentation moves (its own workspace package), only these paths change.
 */
export { SseParser, DEFAULT_MAX_EVENT_CHARS } from '../instrumentation/common/sse-parser.js';
export type { SseEvent } from '../instrumentation/common/sse-parser.js';
export { SpanEmitter } from '../instrumentation/common/span-emitter.js';
export { payloadDigest } from '../instrumentation/common/session-key.js';
export { newIncarnation, parseEventId } from '../instrumentation/common/incarnation.js';
export { describeText, type JsonRpcInfo } from '../instrumentation/common/jsonrpc-info.js';
export { DEFAULT_REQUEST_SPAN_DELAY_MS, DeferredRequests, epochNow } from '../instrumentation/common/deferred-requests.js';
export { componentLogger } from '../instrumentation/common/logger.js';
export { EventIdTracker, DEFAULT_MAX_TRACKED_EVENT_IDS } from '../instrumentation/server/event-id-tracker.js';
export { resumeOutcome, type ResumeOutcome } from '../instrumentation/server/resume-outcome.js';
export { JSONRPC_SESSION_NOT_FOUND } from '../instrumentation/server/session-guard.js';
export { writeJsonRpcError } from '../instrumentation/server/write-jsonrpc-error.js';
export {
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_JSONRPC_KIND,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_METHOD_NAME,
  ATTR_MCP_PROTOCOL_VERSION,
  ATTR_OBSERVER,
  ATTR_PROGRESS_TOKEN,
  ATTR_RESUME_LAST_EVENT_FOUND,
  ATTR_RESUME_LAST_EVENT_ID,
  ATTR_RESUME_OUTCOME,
  ATTR_SESSION_CLIENT_SUPPLIED_ID,
  ATTR_SESSION_CREATED_BY,
  ATTR_SESSION_END_REASON,
  ATTR_SESSION_INCARNATION,
  ATTR_SESSION_INCARNATION_SOURCE,
  ATTR_SSE_EVENT_ID,
  ATTR_SSE_EVENT_SEQ,
  ATTR_SSE_EVENT_SEQ_SOURCE,
  ATTR_SSE_PAYLOAD_BYTES,
  ATTR_SSE_PAYLOAD_DIGEST,
  ATTR_SSE_REPLAYED,
  ATTR_SSE_STREAM_ID,
  HEADER_LAST_EVENT_ID,
  HEADER_PROTOCOL_VERSION,
  HEADER_SESSION_ID,
  HEADER_SESSION_INCARNATION,
  META_INCARNATION,
  OBSERVER_PROXY,
  SPAN_REQUEST_RECEIVED,
  SPAN_RESUME,
  SPAN_SESSION_CREATED,
  SPAN_SESSION_ENDED,
  SPAN_SSE_EVENT,
} from '../semconv.js';
