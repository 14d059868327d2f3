import { diag, type DiagLogger } from '@opentelemetry/api';

/**
 * A component logger on OpenTelemetry's diag channel, like opentelemetry-js instrumentations:
 * silent unless the host enabled diag logging, never writes to the host's stdout by itself.
 */
export function componentLogger(namespace: string): DiagLogger {
  return diag.createComponentLogger({ namespace: `forkwatch/${namespace}` });
}
