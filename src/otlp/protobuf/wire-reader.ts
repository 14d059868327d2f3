import { createError } from '../../errors.js';
import type { DecodeLimits } from '../decode-limits.js';
import { AttributeTooDeep } from '../decode-result.js';
import { canonical } from '../canonical-strings.js';
import { cutString } from '../cut-string.js';
import { StringTable } from '../string-table.js';

// Field numbers are written from the OTLP spec (opentelemetry-proto, trace/v1 and common/v1);
// no .proto file or generated code is used.
export const WT_VARINT = 0;
export const WT_I64 = 1;
export const WT_LEN = 2;
const WT_I32 = 5;

const TWO_32 = 4294967296;
const NS_PER_MS = 1e6;
/** Longest string served from the shared string table, bytes. */
const STRING_TABLE_MAX_BYTES = 64;
// Shared across calls: keys and common values repeat from batch to batch. 4096 slots.
const STRINGS = new StringTable(4096, STRING_TABLE_MAX_BYTES);
/** Buffer's own slicers, which toString(encoding, start, end) calls after checking its arguments. */
interface Slicers {
  utf8Slice(start: number, end: number): string;
}
const slicers = Buffer.prototype as unknown as Partial<Slicers>;
// Called directly for every value: toString's argument and encoding handling cost about as much
// as the slicing of a short string. Every supported Node has it; the fallback is for a runtime
// that does not. (Ids are made in JavaScript: hex-ids.ts.)
const utf8Slice: (buf: Buffer, s: number, e: number) => string =
  typeof slicers.utf8Slice === 'function' ? (buf, s, e) => (buf as unknown as Slicers).utf8Slice(s, e) : (buf, s, e) => buf.toString('utf8', s, e);
// Invalid UTF-8 becomes U+FFFD rather than failing a whole batch over one attribute. What the
// tables keep is the canonical instance: names, keys and compared values as the source's literals.
const decodeUtf8 = (buf: Uint8Array, s: number, e: number): string => canonical(utf8Slice(buf as Buffer, s, e));

/**
 * Protobuf wire primitives over one request body: varints, fixed-width fields, lengths, skipping,
 * strings and the error that names where decoding failed. The OTLP decoders extend it, so `pos`
 * stays one field of one object shape on the hot path.
 */
export class WireReader {
  protected readonly buf: Uint8Array;
  /** The same bytes as a Buffer, for Node's native hex and UTF-8 slicing. */
  protected readonly nb: Buffer;
  protected readonly dv: DataView;
  protected readonly lim: DecodeLimits;
  protected pos = 0;
  // Where we are, for error messages only.
  protected rsIdx = -1;
  protected ssIdx = -1;
  protected spIdx = -1;
  /** Whether a too-deep value rejects the current span only (span attributes) or the request. */
  protected inSpanAttributes = false;

  constructor(buf: Uint8Array, lim: DecodeLimits) {
    this.buf = buf;
    this.nb = Buffer.isBuffer(buf) ? buf : Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
    this.dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    this.lim = lim;
  }

  /** Reads a varint that must fit 32 bits (tags, lengths). */
  protected u32(end: number): number {
    const buf = this.buf;
    let pos = this.pos;
    if (pos >= end) this.fail('truncated varint');
    let b = buf[pos++]!;
    let v = b & 0x7f;
    if (b < 0x80) {
      this.pos = pos;
      return v;
    }
    // A running multiplier, not 2 ** shift: that compiles to a Math.pow call per byte.
    for (let mul = 0x80; mul <= 0x10000000; mul *= 0x80) {
      if (pos >= end) this.fail('truncated varint');
      b = buf[pos++]!;
      v += (b & 0x7f) * mul;
      if (b < 0x80) {
        if (v > 0xffffffff) break;
        this.pos = pos;
        return v;
      }
    }
    this.fail('varint too long for a tag or length');
  }

  /** A signed int64 varint: a number when safe, else its decimal string. */
  protected int64(end: number): number | string {
    const buf = this.buf;
    let pos = this.pos;
    let lo = 0;
    let hi = 0;
    let b = 0;
    let i = 0;
    for (; i < 4; i++) {
      if (pos >= end) this.fail('truncated varint');
      b = buf[pos++]!;
      lo = (lo | ((b & 0x7f) << (i * 7))) >>> 0;
      if (b < 0x80) break;
    }
    if (b >= 0x80) {
      if (pos >= end) this.fail('truncated varint');
      b = buf[pos++]!;
      lo = (lo | ((b & 0x7f) << 28)) >>> 0;
      hi = (b & 0x7f) >>> 4;
      for (i = 0; b >= 0x80 && i < 5; i++) {
        if (pos >= end) this.fail('truncated varint');
        b = buf[pos++]!;
        hi = (hi | ((b & 0x7f) << (i * 7 + 3))) >>> 0;
      }
      if (b >= 0x80) this.fail('varint longer than 10 bytes');
    }
    this.pos = pos;
    if (hi < 0x200000) return hi * TWO_32 + lo;
    if (hi >= 0x80000000) {
      const mag = (0xffffffff - hi) * TWO_32 + (0xffffffff - lo) + 1;
      if (mag <= Number.MAX_SAFE_INTEGER) return -mag;
    }
    return BigInt.asIntN(64, (BigInt(hi) << 32n) | BigInt(lo)).toString();
  }

  protected varintNonZero(end: number): boolean {
    const buf = this.buf;
    let nonZero = false;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= end) this.fail('truncated varint');
      const b = buf[this.pos++]!;
      if ((b & 0x7f) !== 0) nonZero = true;
      if (b < 0x80) return nonZero;
    }
    this.fail('varint longer than 10 bytes');
  }

  protected fixed64Ms(end: number): number {
    this.need(8, end);
    const lo = this.dv.getUint32(this.pos, true);
    const hi = this.dv.getUint32(this.pos + 4, true);
    this.pos += 8;
    return (hi * TWO_32 + lo) / NS_PER_MS;
  }

  /** Reads a length prefix and returns the end of the field's bytes, checked against `end`. */
  protected lenEnd(end: number): number {
    const len = this.u32(end);
    if (len > end - this.pos) this.fail(`length ${len} runs past the end of its message`);
    return this.pos + len;
  }

  protected need(n: number, end: number): void {
    if (end - this.pos < n) this.fail('truncated fixed-width field');
  }

  protected skip(tag: number, end: number): void {
    if (tag >>> 3 === 0) this.fail('field number 0');
    switch (tag & 7) {
      case WT_VARINT:
        for (let i = 0; i < 10; i++) {
          if (this.pos >= end) this.fail('truncated varint');
          if (this.buf[this.pos++]! < 0x80) return;
        }
        this.fail('varint longer than 10 bytes');
        break;
      case WT_I64:
        this.need(8, end);
        this.pos += 8;
        return;
      case WT_LEN:
        this.pos = this.lenEnd(end);
        return;
      case WT_I32:
        this.need(4, end);
        this.pos += 4;
        return;
      default:
        // Groups (3, 4) are not used by OTLP; 6 and 7 do not exist.
        this.fail(`unsupported wire type ${tag & 7}`);
    }
  }

  protected expect(tag: number, wt: number, field: string): void {
    if ((tag & 7) !== wt) this.fail(`${field} has wire type ${tag & 7}, expected ${wt}`);
  }

  protected bytesEqual(s: number, e: number, want: Uint8Array): boolean {
    if (s < 0 || e - s !== want.length) return false;
    for (let i = 0; i < want.length; i++) if (this.buf[s + i] !== want[i]) return false;
    return true;
  }

  /**
   * UTF-8 `buf[s, e)` cut to `max` UTF-16 units; decodes at most the bytes that can matter.
   * `intern`: serve short strings from the shared table (keys, names).
   */
  protected str(s: number, e: number, max: number, intern = true): string {
    // Short strings cannot need cutting when max >= their byte length. Values are interned only
    // for keys whose values repeat: unique ones (event ids) would churn the table and evict the keys.
    if (e - s <= STRING_TABLE_MAX_BYTES && max >= STRING_TABLE_MAX_BYTES) {
      return intern ? STRINGS.get(this.nb, s, e, decodeUtf8, this.dv) : utf8Slice(this.nb, s, e);
    }
    // A UTF-16 unit takes at most 3 UTF-8 bytes; 3 more cover a sequence cut at the end.
    const cap = max * 3 + 3;
    if (e - s > cap) e = s + cap;
    return cutString(utf8Slice(this.nb, s, e), max);
  }

  /** UTF-8 `buf[s, e)` served from `table` (which sets its `lastTag`); no cut, so only for bytes the caller bounded. */
  protected interned(table: StringTable, s: number, e: number): string {
    return table.get(this.nb, s, e, decodeUtf8, this.dv);
  }

  protected base64(s: number, e: number): string {
    const max = this.lim.maxAttributeValueLength;
    // 3 bytes become 4 base64 chars: encode only what survives the cut.
    const cap = Math.ceil(max / 4) * 3;
    if (e - s > cap) e = s + cap;
    return cutString(Buffer.from(this.buf.buffer, this.buf.byteOffset + s, e - s).toString('base64'), max);
  }

  protected tooDeep(): never {
    if (this.inSpanAttributes) throw new AttributeTooDeep();
    this.fail(`attribute nesting deeper than ${this.lim.maxNestingDepth}`);
  }

  protected fail(msg: string): never {
    let where = 'request';
    if (this.rsIdx >= 0) where = `resource_spans[${this.rsIdx}]`;
    if (this.ssIdx >= 0) where += `.scope_spans[${this.ssIdx}]`;
    if (this.spIdx >= 0) where += `.spans[${this.spIdx}]`;
    throw createError('FORKWATCH_ERR_OTLP_DECODE', `${where}: ${msg} (byte ${this.pos})`);
  }
}
