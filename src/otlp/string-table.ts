/**
 * A fixed-size cache of decoded short strings, keyed by their UTF-8 bytes. OTLP batches repeat
 * the same attribute keys and many values (side, session key, service); returning the same
 * string instance avoids an allocation per occurrence and lets V8 reuse internalized property
 * keys. Collisions overwrite: memory stays bounded whatever the input.
 */
export class StringTable {
  private readonly hashes: Int32Array;
  /** Byte length of each slot's string; -1 when empty. */
  private readonly lengths: Int32Array;
  /** One arena for all slots' bytes (slot i at i * maxBytes), so a miss allocates no array. */
  private readonly arena: Uint8Array;
  private readonly strings: Array<string | undefined>;
  private readonly mask: number;
  private readonly maxBytes: number;

  /**
   * @param slots table size, rounded up to a power of two. Default 4096 entries.
   * @param maxBytes longest string cached, bytes. Default 64.
   */
  constructor(slots = 4096, maxBytes = 64) {
    let n = 1;
    while (n < slots) n <<= 1;
    this.hashes = new Int32Array(n);
    this.lengths = new Int32Array(n).fill(-1);
    this.arena = new Uint8Array(n * maxBytes);
    this.strings = new Array<string | undefined>(n).fill(undefined);
    this.mask = n - 1;
    this.maxBytes = maxBytes;
  }

  /**
   * The string for `buf[s, e)`, from the table or from `decode` (called on a miss).
   * Strings longer than `maxBytes` bypass the table.
   */
  get(buf: Uint8Array, s: number, e: number, decode: (buf: Uint8Array, s: number, e: number) => string): string {
    const len = e - s;
    if (len > this.maxBytes) return decode(buf, s, e);
    // FNV-1a over the length and at most the first and last 8 bytes: cheap, and enough to
    // tell keys and ids apart; equality is verified on the full bytes below.
    let h = Math.imul(0x811c9dc5 ^ len, 0x01000193);
    const head = len < 8 ? e : s + 8;
    for (let i = s; i < head; i++) h = Math.imul(h ^ buf[i]!, 0x01000193);
    for (let i = head > e - 8 ? head : e - 8; i < e; i++) h = Math.imul(h ^ buf[i]!, 0x01000193);
    const slot = (h ^ (h >>> 15)) & this.mask;
    const arena = this.arena;
    const base = slot * this.maxBytes;
    if (this.hashes[slot] === h && this.lengths[slot] === len) {
      let same = true;
      for (let i = 0; i < len; i++) {
        if (arena[base + i] !== buf[s + i]) {
          same = false;
          break;
        }
      }
      if (same) return this.strings[slot]!;
    }
    const str = decode(buf, s, e);
    this.hashes[slot] = h;
    this.lengths[slot] = len;
    for (let i = 0; i < len; i++) arena[base + i] = buf[s + i]!;
    this.strings[slot] = str;
    return str;
  }
}
