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
 * A 64-bit hash of an SSE event id (its UTF-16 code units, seeded per process: cyrb53's mixing
 * kept to two full 32-bit halves), for the proxy's session log (session-event-log.ts): returns the
 * low half as a signed 32-bit integer; {@link idHashHi} then gives the high half. Two ids a log
 * holds share both halves with probability about 2^-64. Allocates nothing.
 */
export function idHash(id: string): number {
  const n = id.length;
  let h1 = SEED_LO ^ n;
  let h2 = SEED_HI ^ Math.imul(n, 0x9e3779b1);
  for (let i = 0; i < n; i++) {
    const c = id.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  lastHi = h2 | 0;
  return h1 | 0;
}

/** The high half of the last {@link idHash}. */
export function idHashHi(): number {
  return lastHi;
}
