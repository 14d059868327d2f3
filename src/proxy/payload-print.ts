import { hash64, hashBytes, hashHi } from './id-hash.js';

const PRINT_LO = 0xdeadbeef;
const PRINT_HI = 0x41c6ce57;

/**
 * A 53-bit fingerprint of an SSE event's data (id-hash.ts's hash64), for
 * the proxy's own comparisons only: "the same event id with another payload" in the session log
 * and the guard's judgement. It never leaves the process: spans carry
 * `forkwatch.sse.payload.digest` (SHA-256, docs/telemetry.md), computed only when an event's span
 * is emitted. The SHA-256 of every event that passed was the proxy's largest per-event cost; this
 * costs a native copy and a few instructions per four characters. Two different payloads collide
 * with probability about 2^-53, and a collision only hides a restart whose first event repeats an
 * earlier id.
 */
export function payloadPrint(data: string): number {
  const lo = hash64(data, PRINT_LO, PRINT_HI);
  return 4294967296 * (2097151 & hashHi()) + (lo >>> 0);
}

/** {@link payloadPrint} of the data whose ASCII bytes are `b[start, end)`, read in place. */
export function payloadPrintBytes(b: Uint8Array, start: number, end: number): number {
  const lo = hashBytes(b, start, end, PRINT_LO, PRINT_HI);
  return 4294967296 * (2097151 & hashHi()) + (lo >>> 0);
}
