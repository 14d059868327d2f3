import { randomBytes } from 'node:crypto';

/**
 * Seeds drawn once per process: the ids are chosen by the upstream and `Last-Event-ID` by the
 * client, and neither can aim at a collision of a hash whose seed it cannot read.
 */
const SEEDS = randomBytes(8);
const SEED_LO = SEEDS.readInt32LE(0);
const SEED_HI = SEEDS.readInt32LE(4);

let lastHi = 0;

/**
 * cyrb53's mixing kept to two full 32-bit halves, over the UTF-16 code units `t[from, from + n)`
 * (read in place: `t` may be the flat frame a string was cut from), seeded: returns the low half
 * as a signed 32-bit integer; {@link hashHi} then gives the high half. Allocates nothing. The
 * proxy's payload fingerprint (payload-print.ts) and id hash ({@link idHash}) are this.
 */
export function hash64(t: string, from: number, n: number, seedLo: number, seedHi: number): number {
  let h1 = seedLo ^ n;
  let h2 = seedHi ^ n;
  for (let i = from; i < from + n; i++) {
    const c = t.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  lastHi = h2 | 0;
  return h1 | 0;
}

/** The high half of the last {@link hash64} (or {@link idHash}). */
export function hashHi(): number {
  return lastHi;
}

/**
 * A 64-bit hash of an SSE event id, seeded per process, for the proxy's session log
 * (session-event-log.ts): the low half; {@link hashHi} then gives the high half. Two ids a log
 * holds share both halves with probability about 2^-64.
 */
export function idHash(id: string): number {
  return hash64(id, 0, id.length, SEED_LO, SEED_HI);
}
