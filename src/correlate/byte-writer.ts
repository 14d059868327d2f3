/** Largest integer {@link ByteWriter.varuint} writes: every safe non-negative integer. */
const MAX_VARUINT = Number.MAX_SAFE_INTEGER;

/**
 * Appends records of a hand-rolled binary encoding to one growing buffer. Each record
 * ({@link begin} .. {@link end}) comes back as a view of that buffer: many records share one
 * allocation, and a view stays valid after the writer grows (growing moves only the record in
 * progress to a new buffer; earlier views keep the old one alive). Hot path of every commit, so
 * short ASCII strings are copied by a plain loop instead of a native call each.
 */
export class ByteWriter {
  private buf: Buffer;
  /** The same bytes, for float64 stores the JIT inlines (Buffer.writeDoubleLE is a call). */
  private dv: DataView;
  private pos = 0;
  private start = 0;

  /** @param initialBytes size of the first buffer, bytes. Default 64 KiB. */
  constructor(initialBytes = 65_536) {
    this.buf = Buffer.allocUnsafe(initialBytes);
    this.dv = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
  }

  /** Starts a record. */
  begin(): void {
    this.start = this.pos;
  }

  /** Ends the record started by {@link begin} and returns its bytes (a view, not a copy). */
  end(): Uint8Array {
    return this.buf.subarray(this.start, this.pos);
  }

  /** Reserves 4 bytes for {@link patchU32}; returns their offset within the record. */
  reserveU32(): number {
    if (this.pos + 4 > this.buf.length) this.grow(4);
    this.pos += 4;
    return this.pos - 4 - this.start;
  }

  /** Fills 4 bytes reserved by {@link reserveU32} in the current record (little endian). */
  patchU32(offset: number, v: number): void {
    this.dv.setUint32(this.start + offset, v >>> 0, true);
  }

  u8(v: number): void {
    if (this.pos + 1 > this.buf.length) this.grow(1);
    this.buf[this.pos++] = v;
  }

  /** A non-negative safe integer, 7 bits per byte, low first. */
  varuint(v: number): void {
    if (this.pos + 8 > this.buf.length) this.grow(8);
    const buf = this.buf;
    let p = this.pos;
    if (v < 0x80) {
      buf[p++] = v;
    } else if (v <= 0x7fffffff) {
      while (v >= 0x80) {
        buf[p++] = (v & 0x7f) | 0x80;
        v >>>= 7;
      }
      buf[p++] = v;
    } else {
      if (!(v <= MAX_VARUINT)) throw new RangeError(`varuint out of range: ${v}`);
      while (v >= 0x80) {
        buf[p++] = (v % 0x80) | 0x80;
        v = Math.floor(v / 0x80);
      }
      buf[p++] = v;
    }
    this.pos = p;
  }

  f64(v: number): void {
    if (this.pos + 8 > this.buf.length) this.grow(8);
    this.dv.setFloat64(this.pos, v, true);
    this.pos += 8;
  }

  /**
   * Any number: a non-negative safe integer as a varuint of twice its value (even), anything else
   * (negative, fractional, NaN, huge) as the marker 1 and a float64. Exact either way.
   */
  num(v: number): void {
    // -0 takes the float path: a varuint would give back +0.
    if (Number.isInteger(v) && v >= 0 && v <= MAX_VARUINT / 2 && (v !== 0 || 1 / v > 0)) this.varuint(v * 2);
    else {
      this.varuint(1);
      this.f64(v);
    }
  }

  /** A string: its UTF-8 byte length (varuint), then the bytes. */
  str(s: string): void {
    const n = s.length;
    if (n < 0x80) {
      if (this.pos + 1 + n > this.buf.length) this.grow(1 + n);
      const buf = this.buf;
      let p = this.pos + 1;
      let i = 0;
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        buf[p++] = c;
      }
      if (i === n) {
        buf[this.pos] = n;
        this.pos = p;
        return;
      }
    }
    const bytes = Buffer.byteLength(s, 'utf8');
    this.varuint(bytes);
    if (this.pos + bytes > this.buf.length) this.grow(bytes);
    this.pos += this.buf.write(s, this.pos, bytes, 'utf8');
  }

  /**
   * A trace or span id: 16 or 32 lowercase hex chars (what the decoders produce) as the byte
   * count and the raw bytes, anything else as 0 and the string.
   */
  id(s: string): void {
    const n = s.length;
    if ((n === 16 || n === 32) && this.hexInto(s)) return;
    this.u8(0);
    this.str(s);
  }

  /** Exactly 16 lowercase hex chars as 8 raw bytes, else nothing written and false. */
  hex8(s: string): boolean {
    return s.length === 16 && this.hexBytes(s, this.pos);
  }

  private hexInto(s: string): boolean {
    if (this.pos + 1 + s.length / 2 > this.buf.length) this.grow(1 + s.length / 2);
    this.buf[this.pos] = s.length / 2;
    this.pos++;
    if (this.hexBytes(s, this.pos)) return true;
    this.pos--;
    return false;
  }

  /** Writes the bytes of lowercase hex `s` at `at` and advances past them, or returns false. */
  private hexBytes(s: string, at: number): boolean {
    const bytes = s.length >>> 1;
    if (at + bytes > this.buf.length) {
      this.grow(bytes);
      at = this.pos;
    }
    const buf = this.buf;
    // Branch-free per digit; one check at the end (a non-hex char makes `bad` negative).
    let bad = 0;
    for (let i = 0; i < bytes; i++) {
      const hi = NIBBLE[s.charCodeAt(2 * i) & 0x7f]!;
      const lo = NIBBLE[s.charCodeAt(2 * i + 1) & 0x7f]!;
      bad |= hi | lo | (s.charCodeAt(2 * i) | s.charCodeAt(2 * i + 1)) & 0xff80;
      buf[at + i] = (hi << 4) | lo;
    }
    if (bad < 0 || bad > 0xff) return false;
    this.pos = at + bytes;
    return true;
  }

  /** Moves the record in progress to a buffer with room for `n` more bytes. */
  private grow(n: number): void {
    const used = this.pos - this.start;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, used + n + 1024));
    this.buf.copy(next, 0, this.start, this.pos);
    this.buf = next;
    this.dv = new DataView(next.buffer, next.byteOffset, next.byteLength);
    this.start = 0;
    this.pos = used;
  }
}

/** Value of each lowercase hex digit by char code (< 128), -1 for any other char. */
const NIBBLE = new Int8Array(128).fill(-1);
for (let i = 0; i < 10; i++) NIBBLE[48 + i] = i;
for (let i = 0; i < 6; i++) NIBBLE[97 + i] = 10 + i;
