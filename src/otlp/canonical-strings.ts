import * as semconv from '@forkwatch/instrumentation/semconv';

/**
 * Attribute values the detector compares against literals (sides, message kinds, sources,
 * outcomes); with semconv's names and keys, the strings {@link canonical} hands back as the
 * engine's own constants.
 */
const COMPARED_VALUES = [
  'client',
  'server',
  'request',
  'response',
  'notification',
  'error',
  'initialize',
  'counter',
  'observed',
  'answered',
  'resumed',
  'completed',
  'dropped',
  'forked',
  'rejected_gap',
  'stream_broken',
  'session_id_changed',
  'overloaded',
  'identity',
  'true',
  'false',
];

const CANONICAL = new Map<string, string>();
for (const v of [...Object.values(semconv), ...COMPARED_VALUES]) if (typeof v === 'string') CANONICAL.set(v, v);

/**
 * The source's own instance of `s` when it is a schema name or a compared value, else `s`.
 * Literals are internalized strings: the engine's `name === SPAN_SSE_EVENT` and
 * `side === 'client'` then compare two pointers inline, where a decoded copy cost a call
 * comparing the characters. Called once per string-table miss, not per occurrence.
 */
export function canonical(s: string): string {
  return CANONICAL.get(s) ?? s;
}
