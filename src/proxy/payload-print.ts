import { hash64, hashHi } from './id-hash.js';

/**
 * A 53-bit fingerprint of an SSE event's data (id-hash.ts's hash over its UTF-16 code units), for
 * the proxy's own comparisons only: "the same event id with another payload" in the session log
 * and the guard's judgement. It never leaves the process: spans carry
 * `forkwatch.sse.payload.digest` (SHA-256, docs/telemetry.md), computed only when an event's span
 * is emitted. The SHA-256 of every event that passed was the proxy's largest per-event cost; this
 * costs a native copy and a few instructions per two characters. Two different payloads collide
 * with probability about 2^-53, and a collision only hides a restart whose first event repeats an
 * earlier id.
 */
export function payloadPrint(data: string): number {
  const lo = hash64(data, 0xdeadbeef, 0x41c6ce57);
  return 4294967296 * (2097151 & hashHi()) + (lo >>> 0);
}
