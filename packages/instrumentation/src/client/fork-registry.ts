import type { SessionForkError } from './session-fork-error.js';

/**
 * Links a client or transport to the fork a guard raised on it, so that the instrumentation can
 * classify a request failed by the guard's close (`ConnectionClosed`) as `failed_fork` whichever
 * of the two wrapped `client.request` first.
 */
const forks = new WeakMap<object, SessionForkError>();

export function markFork(target: object | undefined, error: SessionForkError): void {
  if (target) forks.set(target, error);
}

export function forkOf(target: object | undefined): SessionForkError | undefined {
  return target ? forks.get(target) : undefined;
}
