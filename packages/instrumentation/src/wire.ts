/**
 * `@forkwatch/instrumentation/wire`: the building blocks of an observer that sees MCP traffic on
 * the wire rather than inside the SDK (the forkwatch sidecar proxy, the demo's taps): SSE parsing,
 * JSON-RPC inspection, event-id and session-key derivation, and the span emitter, so every emitter
 * derives the same `forkwatch.*` attributes the same way.
 */
export { SseParser, DEFAULT_MAX_EVENT_CHARS } from './common/sse-parser.js';
export type { SseEvent } from './common/sse-parser.js';
export { describeMessage, describeText, DEFAULT_MAX_PARSE_CHARS } from './common/jsonrpc-info.js';
export { argsDigest } from './common/args-digest.js';
export { MessageScanner } from './common/scan-message.js';
export { detach } from './common/own-string.js';
export type { ScannedMessage } from './common/scan-message.js';
export type { JsonRpcInfo } from './common/jsonrpc-info.js';
export { newIncarnation, formatEventId, parseEventId } from './common/incarnation.js';
export type { ParsedEventId } from './common/incarnation.js';
export { sessionKey, payloadDigest, SESSION_KEY_HEX_CHARS, PAYLOAD_DIGEST_HEX_CHARS } from './common/session-key.js';
export { SpanEmitter, MAX_ATTRIBUTE_CHARS } from './common/span-emitter.js';
export type { SpanEmitterOptions } from './common/span-emitter.js';
export { DeferredRequests, DEFAULT_REQUEST_SPAN_DELAY_MS, epochNow } from './common/deferred-requests.js';
export type { DeferredRequest } from './common/deferred-requests.js';
export { resumeOutcome } from './server/resume-outcome.js';
export type { ResumeOutcome } from './server/resume-outcome.js';
export { writeJsonRpcError } from './server/write-jsonrpc-error.js';
// Also here so the proxy need not load the server entry point (the SDK glue) for one number.
export { JSONRPC_SESSION_NOT_FOUND } from './server/session-guard-core.js';
export { DEFAULT_MAX_TRACKED_EVENT_IDS } from './server/event-id-tracker.js';
export {
  EventRing,
  EventRingStore,
  EventSlot,
  digestHex,
  setDigestHex,
  digestInto,
  DEFAULT_MAX_BUFFERED_EVENTS_PER_SESSION,
  DEFAULT_MAX_BUFFERED_EVENTS,
  DEFAULT_MAX_BUFFERED_PAYLOAD_CHARS,
} from './common/event-ring.js';
