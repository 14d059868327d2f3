/**
 * Everything the proxy borrows from the instrumentation package and the telemetry schema, in one
 * place: the proxy derives every `forkwatch.*` attribute the way in-process instrumentation does.
 */
import { diag, type DiagLogger } from '@opentelemetry/api';

export {
  SseParser,
  DEFAULT_MAX_EVENT_CHARS,
  SpanEmitter,
  newIncarnation,
  parseEventId,
  describeText,
  DEFAULT_MAX_PARSE_CHARS,
  argsDigest,
  DeferredRequests,
  DEFAULT_REQUEST_SPAN_DELAY_MS,
  epochNow,
  resumeOutcome,
  writeJsonRpcError,
  DEFAULT_MAX_TRACKED_EVENT_IDS,
  EventRing,
  EventRingStore,
  EventSlot,
  digestHex,
  digestInto,
  DEFAULT_MAX_BUFFERED_EVENTS_PER_SESSION,
  DEFAULT_MAX_BUFFERED_EVENTS,
  JSONRPC_SESSION_NOT_FOUND,
  MessageScanner,
  detach,
  DEFAULT_MAX_BUFFERED_PAYLOAD_CHARS,
} from '@forkwatch/instrumentation/wire';
export type { SseEvent, JsonRpcInfo, ResumeOutcome, ScannedMessage } from '@forkwatch/instrumentation/wire';
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
  ATTR_REQUEST_ARGS_DIGEST,
  ATTR_REQUEST_DURATION_MS,
  ATTR_REQUEST_OUTCOME,
  ATTR_REQUEST_STREAM_CLOSED,
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
  SPAN_REQUEST_HANDLED,
  SPAN_REQUEST_RECEIVED,
  SPAN_REQUEST_SETTLED,
  SPAN_RESUME,
  SPAN_SESSION_CREATED,
  SPAN_SESSION_ENDED,
  SPAN_SSE_EVENT,
} from '@forkwatch/instrumentation/semconv';

/** The proxy's logger on OpenTelemetry's diag channel (silent unless enabled). */
export function componentLogger(namespace: string): DiagLogger {
  return diag.createComponentLogger({ namespace: `forkwatch/${namespace}` });
}
