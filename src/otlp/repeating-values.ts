import {
  ATTR_CLIENT_DELIVERY,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GUARD_FORK_KIND,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_JSONRPC_KIND,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_METHOD_NAME,
  ATTR_MCP_PROTOCOL_VERSION,
  ATTR_MCP_SESSION_ID,
  ATTR_PROGRESS_TOKEN,
  ATTR_REQUEST_OUTCOME,
  ATTR_RESUME_ANSWERED_SESSION_KEY,
  ATTR_RESUME_OUTCOME,
  ATTR_RESUME_PREVIOUS_INCARNATION,
  ATTR_SESSION_CREATED_BY,
  ATTR_SESSION_END_REASON,
  ATTR_SESSION_INCARNATION,
  ATTR_SESSION_INCARNATION_SOURCE,
  ATTR_SESSION_KEY,
  ATTR_SIDE,
  ATTR_SSE_EVENT_SEQ_SOURCE,
  ATTR_SSE_STREAM_ID,
} from '@forkwatch/instrumentation/semconv';

/**
 * Attribute keys whose string values repeat from span to span: enumerations (side, kinds,
 * outcomes, methods) and per-session values (session key, incarnation), which every span of a
 * session carries. The protobuf decoder serves their values from its string table, so a repeat
 * costs neither a string allocation nor, for the engine, a fresh hash of a Map key, and the
 * engine's long-lived facts share one copy. Values unique to one span (event ids, payload
 * digests, Last-Event-ID) are left out on purpose: they would only evict the repeating ones.
 */
export const REPEATING_VALUE_KEYS: ReadonlySet<string> = new Set([
  ATTR_SIDE,
  ATTR_SESSION_KEY,
  ATTR_MCP_SESSION_ID,
  ATTR_SESSION_INCARNATION,
  ATTR_SESSION_INCARNATION_SOURCE,
  ATTR_SESSION_CREATED_BY,
  ATTR_SESSION_END_REASON,
  ATTR_SSE_EVENT_SEQ_SOURCE,
  ATTR_SSE_STREAM_ID,
  ATTR_JSONRPC_KIND,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_METHOD_NAME,
  ATTR_MCP_PROTOCOL_VERSION,
  ATTR_PROGRESS_TOKEN,
  ATTR_CLIENT_DELIVERY,
  ATTR_RESUME_OUTCOME,
  ATTR_RESUME_PREVIOUS_INCARNATION,
  ATTR_RESUME_ANSWERED_SESSION_KEY,
  ATTR_REQUEST_OUTCOME,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_GUARD_FORK_KIND,
]);
