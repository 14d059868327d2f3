import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createSessionGuardWith } from './session-guard-core.js';
import type { SessionGuard, SessionGuardOptions } from './types.js';

export {
  DEFAULT_IDLE_TTL_MS,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_REAP_INTERVAL_MS,
  JSONRPC_SESSION_NOT_FOUND,
  JSONRPC_EVENT_NOT_IN_LOG,
} from './session-guard-core.js';

/**
 * Creates a session guard: the registry of sessions and their event logs as one structure, and
 * the resume decision boundary. Unknown session -> 404/-32001, allocating nothing; known session
 * with a `Last-Event-ID` not in its log -> 409/-32002 with `data.reason`; otherwise the SDK
 * transport replays after the event. Over the MCP SDK 1.x `StreamableHTTPServerTransport`; for
 * SDK 2.x, `createSessionGuard` from `@forkwatch/instrumentation/server/v2`.
 * Throws FORKWATCH_ERR_CONFIG_INVALID on bad options.
 */
export function createSessionGuard(options: SessionGuardOptions): SessionGuard {
  return createSessionGuardWith((o) => new StreamableHTTPServerTransport(o), options);
}
