import type { DiagLogger } from '@opentelemetry/api';

/**
 * Runs `fn`, and if it throws, logs at debug and returns: the instrumentation never throws into
 * the host. Hot per-message hooks catch inline instead (a closure per call was garbage there).
 */
export function safeExecute(logger: DiagLogger, what: string, fn: () => void): void {
  try {
    fn();
  } catch (err) {
    logger.debug(`${what} failed`, err);
  }
}
