import type { DiagLogger } from '@opentelemetry/api';
import { LOG_LEVELS } from '../config/defaults.js';

export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * The detector's logger: one JSON object per line on stderr (stdout is kept for the CLI's own
 * messages). Implements DiagLogger so library parts written against OpenTelemetry's diag API
 * log through it.
 */
export function createJsonLogger(level: LogLevel, write: (line: string) => void = (l) => process.stderr.write(l)): DiagLogger {
  const rank = LOG_LEVELS.indexOf(level);
  const at = (lvl: LogLevel) => (msg: string, ...args: unknown[]): void => {
    if (LOG_LEVELS.indexOf(lvl) > rank) return;
    const entry: Record<string, unknown> = { time: new Date().toISOString(), level: lvl, msg };
    for (const a of args) {
      if (a instanceof Error) entry.err = { message: a.message, code: (a as { code?: unknown }).code };
      else if (a && typeof a === 'object') Object.assign(entry, a);
      else if (a !== undefined) entry.detail = a;
    }
    try {
      write(`${JSON.stringify(entry)}\n`);
    } catch {
      // Logging must never take the detector down.
    }
  };
  return { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug'), verbose: at('debug') };
}
