import type { DiagLogger } from '@opentelemetry/api';
import pino from 'pino';
import { LOG_LEVELS } from '../config/defaults.js';

export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * The detector's logger: pino (fastify's own), one JSON object per line on stderr (stdout is kept
 * for the CLI's own messages), with `level` as its name and `time` as ISO 8601 as before. It
 * implements DiagLogger so library parts written against OpenTelemetry's diag API log through it;
 * levels below the threshold are pino's no-ops, so a disabled `debug()` costs a call.
 * @param level lowest level written. `write` replaces stderr (tests).
 */
export function createJsonLogger(level: LogLevel, write: (line: string) => void = (l) => process.stderr.write(l)): DiagLogger {
  const log = pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // `err` is already the {message, code} we log; pino's serializer would add a stack.
      serializers: { err: (e: unknown) => e },
    },
    {
      write(line: string) {
        try {
          write(line);
        } catch {
          // Logging must never take the detector down.
        }
      },
    },
  );
  const at = (lvl: LogLevel) => (msg: string, ...args: unknown[]): void => {
    const fields: Record<string, unknown> = {};
    for (const a of args) {
      if (a instanceof Error) fields.err = { message: a.message, code: (a as { code?: unknown }).code };
      else if (a && typeof a === 'object') Object.assign(fields, a);
      else if (a !== undefined) fields.detail = a;
    }
    log[lvl](fields, msg);
  };
  return { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug'), verbose: at('debug') };
}
