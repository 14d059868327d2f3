import type { DiagLogger } from '@opentelemetry/api';

/**
 * A whole number >= `min` for option `name`, or `fallback` when the value is absent. An invalid
 * value (not a finite integer, or below `min`) also falls back, with a `diag.warn`: an observing
 * instrumentation never throws into the host over its own options.
 */
export function intOption(logger: DiagLogger, name: string, value: unknown, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  if (typeof value === 'number' && Number.isInteger(value) && value >= min) return value;
  logger.warn(`option ${name}: ${String(value)} is not an integer >= ${min}; using the default ${fallback}`);
  return fallback;
}
