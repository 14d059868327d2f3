import { randomBytes } from 'node:crypto';

/** A new incarnation nonce: 16 lowercase hex chars from the CSPRNG. */
export function newIncarnation(): string {
  return randomBytes(8).toString('hex');
}

const GUARDED_ID = /^([0-9a-f]{16})-([0-9]{1,15})$/;
const COUNTER_ID = /^[A-Za-z_-]{0,16}([0-9]{1,15})$/;
/** Longest id either expression can match: 16 + 1 + 15 (guarded), 16 + 15 (counter). */
const MAX_SEQUENCED_ID_CHARS = 32;
/** The answer for an id of neither shape: shared, never mutated. */
const NO_SEQUENCE: ParsedEventId = Object.freeze({});

/** Event id of a guarded event store: `<incarnation>-<seq>`. */
export function formatEventId(incarnation: string, seq: number): string {
  return `${incarnation}-${seq}`;
}

export interface ParsedEventId {
  seq?: number;
  /** `server` for a guarded id, `counter` for a plain counter id, undefined when neither. */
  source?: 'server' | 'counter';
  incarnation?: string;
}

/**
 * What an event id tells of its sequence. Only two shapes are trusted: a guarded id
 * (`<16 hex>-<n>`) and a plain counter (`e7`, `evt-7`, `7`); ids such as the SDK example store's
 * `<stream>_<ms>_<random>` carry no usable sequence and yield `{}` (one shared, frozen object).
 */
export function parseEventId(id: string): ParsedEventId {
  // Neither shape is longer than 32 chars: the SDK store's ids (a UUID and more) are answered
  // without running either expression, as they are on every SSE event of such a server.
  if (id.length > MAX_SEQUENCED_ID_CHARS) return NO_SEQUENCE;
  let m = GUARDED_ID.exec(id);
  if (m) return { seq: Number(m[2]), source: 'server', incarnation: m[1] };
  m = COUNTER_ID.exec(id);
  if (m) return { seq: Number(m[1]), source: 'counter' };
  return NO_SEQUENCE;
}
