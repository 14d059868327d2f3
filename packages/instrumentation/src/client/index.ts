/** `forkwatch/client`: client instrumentation and guard for the MCP SDK's Streamable HTTP transport. */
export { ClientInstrumentation, createClientInstrumentation } from './client-instrumentation.js';
export type { AttachableClient, AttachableTransport, ClientInstrumentationStats } from './types.js';
export { ClientGuard, createClientGuard } from './client-guard.js';
export type { GuardableTransport } from './client-guard.js';
export { ForkGuard } from './fork-guard.js';
export type { ForkGuardOptions, HighWaterMark, ResumeAnswer } from './fork-guard.js';
export { SessionForkError, isSessionForkError } from './session-fork-error.js';
export { connectGuarded } from './connect-guarded.js';
export type { GuardedClient } from './connect-guarded.js';
export type {
  ClientCommonOptions,
  ClientGuardOptions,
  ClientInstrumentationOptions,
  ConnectGuardedOptions,
  FetchLike,
  ForkListener,
  SessionForkKind,
} from './types.js';
