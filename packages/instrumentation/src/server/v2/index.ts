/**
 * `@forkwatch/instrumentation/server/v2`: the session guard and transport instrumentation for the
 * MCP TypeScript SDK 2.x (`@modelcontextprotocol/server` with the `@modelcontextprotocol/node`
 * transport). Same spans and the same resume decisions as for 1.x: the 2.x Node transport wraps
 * the same web-standard transport, so the 1.x code observes it unchanged; only its construction
 * and types differ. Imports only the 2.x packages: a 2.x app needs no 1.x package (`/server`
 * imports the 1.x SDK; use this entry point instead).
 */
import { NodeStreamableHTTPServerTransport, type StreamableHTTPServerTransportOptions } from '@modelcontextprotocol/node';
import type { McpServer, Server } from '@modelcontextprotocol/server';
import { createSessionGuardWith, type GuardTransportFactory } from '../session-guard-core.js';
import type { ServerInstrumentation, SessionEndReason, SessionGuard, SessionGuardOptions } from '../types.js';

export {
  DEFAULT_IDLE_TTL_MS,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_REAP_INTERVAL_MS,
  JSONRPC_SESSION_NOT_FOUND,
  JSONRPC_EVENT_NOT_IN_LOG,
} from '../session-guard-core.js';
export { GuardedEventStore } from '../guarded-event-store.js';
export { createServerInstrumentation, DEFAULT_MAX_TRACKED_SESSIONS } from '../server-instrumentation.js';
export type { ServerInstrumentation, ServerInstrumentationOptions, SessionEndReason, SessionGuard, SessionGuardOptions } from '../types.js';

/** {@link SessionGuardOptions} with a 2.x server factory. */
export type SessionGuardV2Options = Omit<SessionGuardOptions, 'createServer'> & {
  /** A fresh SDK 2.x server per session. */
  createServer: () => McpServer | Server;
};

const newV2Transport = ((o: StreamableHTTPServerTransportOptions) => new NodeStreamableHTTPServerTransport(o)) as unknown as GuardTransportFactory;

/**
 * A session guard over `NodeStreamableHTTPServerTransport` (SDK 2.x, sessionful: the guard sets
 * `sessionIdGenerator`): unknown session on resume -> 404/-32001, event absent from the session's
 * log -> 409/-32002, never a minted replacement. Same defaults and errors as the 1.x guard.
 */
export function createSessionGuard(options: SessionGuardV2Options): SessionGuard {
  return createSessionGuardWith(newV2Transport, options as unknown as SessionGuardOptions);
}

/** Instruments one SDK 2.x Node transport in place (idempotent) and returns it: the 1.x `observeTransport`. */
export function observeTransport<T extends NodeStreamableHTTPServerTransport>(instrumentation: ServerInstrumentation, transport: T): T {
  instrumentation.observeTransport(transport as unknown as Parameters<ServerInstrumentation['observeTransport']>[0]);
  return transport;
}

/** Records the end of a 2.x transport's session (reaped, evicted, closed): the 1.x `markEnded`. */
export function markEnded(
  instrumentation: ServerInstrumentation,
  sessionIdOrTransport: string | NodeStreamableHTTPServerTransport,
  reason: SessionEndReason,
  eventsEvicted?: number,
): void {
  instrumentation.markEnded(sessionIdOrTransport as unknown as Parameters<ServerInstrumentation['markEnded']>[0], reason, eventsEvicted);
}
export { observeStatelessServers } from './observe-stateless.js';
export type { StatelessServerOptions } from './observe-stateless.js';
