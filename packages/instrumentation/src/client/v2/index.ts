/**
 * `@forkwatch/instrumentation/client/v2`: client instrumentation and guard for the MCP TypeScript
 * SDK 2.x (`@modelcontextprotocol/client`). The instrumentation and guard are the 1.x ones (they
 * hook the transport's `fetch` and the client's `request()`, which 2.x keeps): the same spans and
 * the same `SessionForkError`s. `connectGuarded` builds 2.x clients. A 2.x app needs no 1.x package.
 */
export { connectGuarded } from './connect-guarded.js';
export type { ConnectGuardedV2Options, GuardedClientV2 } from './connect-guarded.js';
export { ClientInstrumentation, createClientInstrumentation } from '../client-instrumentation.js';
export { ClientGuard, createClientGuard } from '../client-guard.js';
export { SessionForkError, isSessionForkError } from '../session-fork-error.js';
export { createStatelessClientTap, MAX_TAPPED_BODY_CHARS } from './stateless-tap.js';
export type { StatelessClientTapOptions } from './stateless-tap.js';
