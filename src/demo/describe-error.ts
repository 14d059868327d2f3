import type { ErrorRecord } from './types.js';

/** Name, message, numeric code and SessionForkError kind of whatever was thrown. Never throws. */
export function describeError(err: unknown): Omit<ErrorRecord, 'source'> {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  const e = err as Error & { code?: unknown; kind?: unknown };
  const name = e.name === 'Error' && e.constructor?.name ? e.constructor.name : e.name;
  const rec: Omit<ErrorRecord, 'source'> = { name, message: e.message };
  if (typeof e.code === 'number') rec.code = e.code;
  if (typeof e.kind === 'string') rec.kind = e.kind;
  return rec;
}
