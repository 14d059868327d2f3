/**
 * Reads what {@link ByteWriter} wrote. Every read is bounds-checked: a truncated or corrupt
 * record throws a TypeError (the engine turns it into FORKWATCH_ERR_STORAGE) rather than
 * yielding undefined values.
 */
export class ByteReader {
  private readonly buf: Buffer;
  private pos: number;

  constructor(bytes: Uint8Array, offset = 0) {
    this.buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.pos = offset;
  }

  /** True when every byte was read. */
  done(): boolean {
    return this.pos === this.buf.length;
  }

  u8(): number {
    if (this.pos >= this.buf.length) truncated();
    return this.buf[this.pos++]!;
  }

  u32(): number {
    if (this.pos + 4 > this.buf.length) truncated();
    const v = this.buf.readUInt32LE(this.pos);
    this.pos += 4;
    return v;
  }

  varuint(): number {
    let v = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      const b = this.u8();
      v += (b & 0x7f) * scale;
      if (b < 0x80) {
        if (v > Number.MAX_SAFE_INTEGER) break;
        return v;
      }
      scale *= 0x80;
    }
    throw new TypeError('malformed varuint in session state');
  }

  f64(): number {
    if (this.pos + 8 > this.buf.length) truncated();
    const v = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return v;
  }

  /** Inverse of {@link ByteWriter.num}. */
  num(): number {
    const x = this.varuint();
    if (x === 1) return this.f64();
    if (x % 2 !== 0) throw new TypeError('malformed number in session state');
    return x / 2;
  }

  str(): string {
    const n = this.varuint();
    if (this.pos + n > this.buf.length) truncated();
    const s = this.buf.toString('utf8', this.pos, this.pos + n);
    this.pos += n;
    return s;
  }

  /** Inverse of {@link ByteWriter.id}. */
  id(): string {
    const n = this.u8();
    if (n === 0) return this.str();
    if (n !== 8 && n !== 16) throw new TypeError('malformed id in session state');
    return this.hex(n);
  }

  /** `n` raw bytes as lowercase hex (inverse of {@link ByteWriter.hex8} for n = 8). */
  hex(n: number): string {
    if (this.pos + n > this.buf.length) truncated();
    const s = this.buf.toString('hex', this.pos, this.pos + n);
    this.pos += n;
    return s;
  }
}

function truncated(): never {
  throw new TypeError('truncated session state');
}
