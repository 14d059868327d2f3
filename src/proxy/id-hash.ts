import { randomBytes } from 'node:crypto';

/**
 * Seeds drawn once per process: the ids are chosen by the upstream and `Last-Event-ID` by the
 * client, and neither can aim at a collision of a hash whose seed it cannot read.
 */
const SEEDS = randomBytes(8);
const SEED_LO = SEEDS.readInt32LE(0);
const SEED_HI = SEEDS.readInt32LE(4);

/** Chars a string may have to be hashed through the scratch (a longer one is encoded apart). */
const PIECE_CHARS = 1024;
/** UTF-8 takes at most 3 bytes per UTF-16 unit: any string of PIECE_CHARS fits. */
const scratch = Buffer.allocUnsafeSlow(PIECE_CHARS * 3);
/** The scratch read two UTF-16 units at a time (the non-ASCII strings' words). */
const units = new Int32Array(scratch.buffer, scratch.byteOffset, (PIECE_CHARS * 2) / 4);

let lastHi = 0;

/**
 * cyrb53's mixing kept to two full 32-bit halves, seeded: returns the low half as a signed 32-bit
 * integer; {@link hashHi} then gives the high half. Each step is a bijection of the state (one
 * word changed always changes the hash). An ASCII string is hashed as its bytes, four to a word
 * ({@link hashBytes}), so that the sidecar hashes an event's id and data straight off the chunk
 * (sse-scan.ts) to the same value; any other string as its UTF-16 code units, two to a word (lone
 * surrogates as they are), under another seed tweak. The string is copied by one native write
 * into a scratch buffer read as 32-bit words: `charCodeAt` in a loop checked the string's
 * representation on every char. Allocates nothing below {@link PIECE_CHARS} chars. The proxy's
 * payload fingerprint (payload-print.ts) and id hash ({@link idHash}) are this.
 */
export function hash64(s: string, seedLo: number, seedHi: number): number {
  const n = s.length;
  if (n <= PIECE_CHARS) {
    // One UTF-8 byte per char only when every char is ASCII.
    if (scratch.write(s, 0, 'utf8') === n) return hashBytes(scratch, 0, n, seedLo, seedHi);
  } else {
    const b = Buffer.from(s, 'utf8');
    if (b.length === n) return hashBytes(b, 0, n, seedLo, seedHi);
  }
  return hashUnits(s, seedLo, seedHi);
}

/** A string with a non-ASCII char: its UTF-16 code units, two to a word, a piece at a time. */
function hashUnits(s: string, seedLo: number, seedHi: number): number {
  const n = s.length;
  // The tweak keeps the two encodings' words apart (an ASCII string of other bytes never lines up).
  let h1 = seedLo ^ n ^ 0x5bd1e995;
  let h2 = seedHi ^ n;
  for (let from = 0; from < n; from += PIECE_CHARS) {
    const m = Math.min(PIECE_CHARS, n - from);
    scratch.write(m === n ? s : s.slice(from, from + m), 0, m * 2, 'utf16le');
    // An odd count: the last word's second unit is zero, not a byte left from an earlier string.
    if ((m & 1) === 1) scratch[m * 2] = scratch[m * 2 + 1] = 0;
    const w = (m + 1) >> 1;
    for (let i = 0; i < w; i++) {
      const c = units[i]!;
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
 * {@link hash64} of the ASCII string the bytes `b[start, end)` spell, read in place four to a
 * word (little-endian; the last 1-3 bytes zero-padded, the length seeded in): the sidecar's SSE
 * relay hashes an event's id and data off the chunk (sse-scan.ts), without the string or a copy.
 * Two bytes to a word (as UTF-16 units are) cost twice the mixing: it was the largest function
 * of the proxy's per-event work as deployed (`SIDECAR_INSTR_KEEP`, bench/sidecar-instructions.ts).
 * test/proxy/id-hash.test.ts checks it against the strings'.
 */
export function hashBytes(b: Uint8Array, start: number, end: number, seedLo: number, seedHi: number): number {
  const n = end - start;
  let h1 = seedLo ^ n;
  let h2 = seedHi ^ n;
  let i = start;
  for (; i + 4 <= end; i += 4) {
    const c = b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h1 = (h1 << 13) | (h1 >>> 19);
    h2 = Math.imul(h2 ^ c, 1597334677);
    h2 = (h2 << 17) | (h2 >>> 15);
  }
  if (i < end) {
    let c = b[i]!;
    if (i + 1 < end) c |= b[i + 1]! << 8;
    if (i + 2 < end) c |= b[i + 2]! << 16;
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
