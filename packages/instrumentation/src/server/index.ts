/** `forkwatch/server`: server instrumentation and session guard for the MCP SDK's Streamable HTTP transport. */
export { createServerInstrumentation, DEFAULT_MAX_TRACKED_SESSIONS } from './server-instrumentation.js';
export {
  createSessionGuard,
  DEFAULT_IDLE_TTL_MS,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_REAP_INTERVAL_MS,
  JSONRPC_SESSION_NOT_FOUND,
  JSONRPC_EVENT_NOT_IN_LOG,
} from './session-guard.js';
export { GuardedEventStore, DEFAULT_MAX_EVENTS_PER_SESSION, DEFAULT_MAX_BYTES_PER_SESSION } from './guarded-event-store.js';
export { DEFAULT_MAX_TRACKED_EVENT_IDS } from './event-id-tracker.js';
export type {
  ServerInstrumentation,
  ServerInstrumentationOptions,
  SessionEndReason,
  SessionGuard,
  SessionGuardOptions,
  SessionGuardStats,
  GuardedEventStoreOptions,
  EventLookup,
  EventAbsentReason,
} from './types.js';
