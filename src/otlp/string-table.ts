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
  /** One arena for all slots' bytes (slot i at i * stride), so a miss allocates no array. */
  private readonly arena: Uint8Array;
  /** The arena as 32-bit words: lookups hash and compare 4 bytes at a time. */
  private readonly words: DataView;
  private readonly strings: Array<string | undefined>;
  /** Each slot's tag, from `tagOf` when the string was decoded. */
  private readonly tags: Uint8Array;
  private readonly tagOf: ((s: string) => number) | undefined;
  /**
   * The tag of the string the last {@link get} returned (0 without `tagOf`). Read it right after
   * the call: the decoder learns a key's kind with the key, without a second lookup by string.
   */
  lastTag = 0;
  private readonly mask: number;
  private readonly maxBytes: number;
  /** Bytes per slot: maxBytes rounded up to a whole word. */
  private readonly stride: number;

  /**
   * @param slots table size, rounded up to a power of two. Default 4096 entries.
   * @param maxBytes longest string cached, bytes. Default 64.
   * @param tagOf classifies a string once, when it is decoded (a byte, 0-255); see {@link lastTag}.
   */
  constructor(slots = 4096, maxBytes = 64, tagOf?: (s: string) => number) {
    let n = 1;
    while (n < slots) n <<= 1;
    this.hashes = new Int32Array(n);
    this.lengths = new Int32Array(n).fill(-1);
    this.stride = (maxBytes + 3) & ~3;
    this.arena = new Uint8Array(n * this.stride);
    this.words = new DataView(this.arena.buffer);
    this.strings = new Array<string | undefined>(n).fill(undefined);
    this.tags = new Uint8Array(n);
    this.tagOf = tagOf;
    this.mask = n - 1;
    this.maxBytes = maxBytes;
  }

  /**
   * The string for `buf[s, e)`, from the table or from `decode` (called on a miss).
   * Strings longer than `maxBytes` bypass the table.
   * @param view a DataView over the same bytes as `buf`, when the caller has one (saves making one).
   */
  get(buf: Uint8Array, s: number, e: number, decode: (buf: Uint8Array, s: number, e: number) => string, view?: DataView): string {
    const len = e - s;
    if (len > this.maxBytes) {
      const long = decode(buf, s, e);
      this.lastTag = this.tagOf === undefined ? 0 : this.tagOf(long);
      return long;
    }
    // This runs for every attribute key: it reads words, not bytes (a loop step per byte was most
    // of the decoder's time). The hash mixes the length and the first, middle and last words,
    // enough to tell keys and ids apart; equality is verified on all bytes below.
    let h = Math.imul(0x811c9dc5 ^ len, 0x01000193);
    let dv: DataView | undefined;
    if (len >= 4) {
      dv = view ?? new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
      h = Math.imul(h ^ dv.getInt32(s, true), 0x01000193);
      h = Math.imul(h ^ dv.getInt32(e - 4, true), 0x01000193);
      if (len > 8) h = Math.imul(h ^ dv.getInt32(s + ((len - 4) >> 1), true), 0x01000193);
    } else {
      for (let i = s; i < e; i++) h = Math.imul(h ^ buf[i]!, 0x01000193);
    }
    const slot = (h ^ (h >>> 15)) & this.mask;
    const base = slot * this.stride;
    if (this.hashes[slot] === h && this.lengths[slot] === len && this.same(buf, dv, s, len, base)) {
      this.lastTag = this.tags[slot]!;
      return this.strings[slot]!;
    }
    const str = decode(buf, s, e);
    const tag = this.tagOf === undefined ? 0 : this.tagOf(str);
    this.tags[slot] = tag;
    this.lastTag = tag;
    this.hashes[slot] = h;
    this.lengths[slot] = len;
    const arena = this.arena;
    for (let i = 0; i < len; i++) arena[base + i] = buf[s + i]!;
    this.strings[slot] = str;
    return str;
  }

  /** Whether the slot at `base` holds exactly the `len` bytes at `buf[s]` (`dv` is set when len >= 4). */
  private same(buf: Uint8Array, dv: DataView | undefined, s: number, len: number, base: number): boolean {
    if (dv === undefined) {
      for (let i = 0; i < len; i++) if (this.arena[base + i] !== buf[s + i]) return false;
      return true;
    }
    const w = this.words;
    let i = 0;
    for (; i + 4 <= len; i += 4) if (w.getInt32(base + i, true) !== dv.getInt32(s + i, true)) return false;
    // The last partial word: compare the last 4 bytes, overlapping bytes already compared.
    return i === len || w.getInt32(base + len - 4, true) === dv.getInt32(s + len - 4, true);
  }
}
