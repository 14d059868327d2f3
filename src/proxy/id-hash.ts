import { randomBytes } from 'node:crypto';

/**
 * Seeds drawn once per process: the ids are chosen by the upstream and `Last-Event-ID` by the
 * client, and neither can aim at a collision of a hash whose seed it cannot read.
 */
const SEEDS = randomBytes(8);
const SEED_LO = SEEDS.readInt32LE(0);
const SEED_HI = SEEDS.readInt32LE(4);

/** UTF-16 code units copied into the scratch per native write (a longer string goes in pieces). */
const PIECE_CHARS = 1024;
const scratch = Buffer.allocUnsafeSlow(PIECE_CHARS * 2);
/** The scratch read two code units at a time. */
const words = new Int32Array(scratch.buffer, scratch.byteOffset, PIECE_CHARS / 2);

let lastHi = 0;

/**
 * cyrb53's mixing kept to two full 32-bit halves, over the UTF-16 code units of `s` two at a time
 * (each step a bijection of the state: one word changed always changes the hash), seeded:
 * returns the low half as a signed 32-bit integer; {@link hashHi} then gives the high half. The
 * string is copied by one native write (UTF-16LE, lossless) into a scratch buffer read as 32-bit
 * words: `charCodeAt` in a loop checked the string's representation on every char, ~33
 * instructions a char as deployed (`SIDECAR_INSTR_KEEP`, bench/sidecar-instructions.ts), the
 * sidecar's largest per-event cost. Allocates nothing below {@link PIECE_CHARS} chars. The proxy's
 * payload fingerprint (payload-print.ts) and id hash ({@link idHash}) are this.
 */
export function hash64(s: string, seedLo: number, seedHi: number): number {
  const n = s.length;
  let h1 = seedLo ^ n;
  let h2 = seedHi ^ n;
  for (let from = 0; from < n; from += PIECE_CHARS) {
    const m = Math.min(PIECE_CHARS, n - from);
    scratch.write(m === n ? s : s.slice(from, from + m), 0, m * 2, 'utf16le');
    // An odd count: the last word's second unit is zero, not a byte left from an earlier string.
    if ((m & 1) === 1) scratch[m * 2] = scratch[m * 2 + 1] = 0;
    const w = (m + 1) >> 1;
    for (let i = 0; i < w; i++) {
      const c = words[i]!;
      // Rotated after each product: a product carries a word's top bit to nothing but the top
      // bit, so without it two strings differing there, at any two places, hashed alike.
      h1 = Math.imul(h1 ^ c, 2654435761);
      h1 = (h1 << 13) | (h1 >>> 19);
      h2 = Math.imul(h2 ^ c, 1597334677);
      h2 = (h2 << 17) | (h2 >>> 15);
    }
  }
  return finish(h1, h2);
}

/**
 * {@link hash64} of the string whose UTF-16 code units are the bytes `b[start, end)` (ASCII
 * bytes: the string they decode to), read in place: the sidecar's SSE relay hashes an event's id
 * and data straight off the chunk (sse-scan.ts), without the string, the native copy into the
 * scratch, or the call that makes it. Equal to hash64 of that string by construction (the same
 * words in the same order), which test/proxy/id-hash.test.ts checks.
 */
export function hashBytes(b: Uint8Array, start: number, end: number, seedLo: number, seedHi: number): number {
  const n = end - start;
  let h1 = seedLo ^ n;
  let h2 = seedHi ^ n;
  let i = start;
  for (; i + 1 < end; i += 2) {
    const c = b[i]! | (b[i + 1]! << 16);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h1 = (h1 << 13) | (h1 >>> 19);
    h2 = Math.imul(h2 ^ c, 1597334677);
    h2 = (h2 << 17) | (h2 >>> 15);
  }
  if (i < end) {
    // An odd count: the last word's second unit is zero, as hash64's scratch has it.
    const c = b[i]!;
    h1 = Math.imul(h1 ^ c, 2654435761);
    h1 = (h1 << 13) | (h1 >>> 19);
    h2 = Math.imul(h2 ^ c, 1597334677);
    h2 = (h2 << 17) | (h2 >>> 15);
  }
  return finish(h1, h2);
}

/** The two halves mixed into each other: the low one returned, the high one kept for {@link hashHi}. */
function finish(h1: number, h2: number): number {
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  lastHi = h2 | 0;
  return h1 | 0;
}

/** {@link idHash} of the id whose ASCII bytes are `b[start, end)`; {@link hashHi} then gives the high half. */
export function idHashBytes(b: Uint8Array, start: number, end: number): number {
  return hashBytes(b, start, end, SEED_LO, SEED_HI);
}

/** The high half of the last {@link hash64} (or {@link idHash}, {@link hashBytes}). */
export function hashHi(): number {
  return lastHi;
}

/**
 * A 64-bit hash of an SSE event id, seeded per process, for the proxy's session log
 * (session-event-log.ts): the low half; {@link hashHi} then gives the high half. Two ids a log
 * holds share both halves with probability about 2^-64.
 */
export function idHash(id: string): number {
  return hash64(id, SEED_LO, SEED_HI);
}
