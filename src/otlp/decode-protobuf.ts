import type { AttrValue, SpanRecord } from '../model/span-record.js';
import { createError } from '../errors.js';
import { SPAN_NAME_PREFIX } from '@forkwatch/instrumentation/semconv';
import { DecodeAccumulator, setAttribute } from './decode-accumulator.js';
import { resolveDecodeLimits } from './decode-limits.js';
import type { DecodeLimits } from './decode-limits.js';
import { AttributeTooDeep, type DecodeResult } from './decode-result.js';
import { isAllZero } from './is-all-zero.js';
import { cutString } from './cut-string.js';
import { REPEATING_VALUE_KEYS } from './repeating-values.js';
import { StringTable } from './string-table.js';

// Field numbers are written from the OTLP spec (opentelemetry-proto, trace/v1 and common/v1);
// no .proto file or generated code is used.
const WT_VARINT = 0;
const WT_I64 = 1;
const WT_LEN = 2;
const WT_I32 = 5;

const TWO_32 = 4294967296;
const NS_PER_MS = 1e6;
const UNKNOWN_SERVICE = 'unknown_service';
const PREFIX = new TextEncoder().encode(SPAN_NAME_PREFIX);
const SERVICE_NAME = new TextEncoder().encode('service.name');
/** Longest string served from the shared string table, bytes. */
const STRING_TABLE_MAX_BYTES = 64;
// Shared across calls: keys and common values repeat from batch to batch. 4096 slots.
const STRINGS = new StringTable(4096, STRING_TABLE_MAX_BYTES);
/** Buffer's own slicers, which toString(encoding, start, end) calls after checking its arguments. */
interface Slicers {
  utf8Slice(start: number, end: number): string;
  hexSlice(start: number, end: number): string;
}
const slicers = Buffer.prototype as unknown as Partial<Slicers>;
// Called directly for every id and value: toString's argument and encoding handling cost about
// as much as the slicing of a short string. Every supported Node has them; the fallbacks are
// for a runtime that does not.
const utf8Slice: (buf: Buffer, s: number, e: number) => string =
  typeof slicers.utf8Slice === 'function' ? (buf, s, e) => (buf as unknown as Slicers).utf8Slice(s, e) : (buf, s, e) => buf.toString('utf8', s, e);
const hexSlice: (buf: Buffer, s: number, e: number) => string =
  typeof slicers.hexSlice === 'function' ? (buf, s, e) => (buf as unknown as Slicers).hexSlice(s, e) : (buf, s, e) => buf.toString('hex', s, e);
// Invalid UTF-8 becomes U+FFFD rather than failing a whole batch over one attribute.
const decodeUtf8 = (buf: Uint8Array, s: number, e: number): string => utf8Slice(buf as Buffer, s, e);

/**
 * Decodes a binary OTLP `ExportTraceServiceRequest` into forkwatch {@link SpanRecord}s.
 *
 * Foreign spans (name not starting with `forkwatch.`) are located, counted and skipped: their
 * attributes, events and links are never decoded. Forkwatch spans with bad ids or no valid
 * `forkwatch.side` are rejected and counted; the rest of the batch continues.
 *
 * @param buf the request body, already decompressed.
 * @param limits overrides of {@link DEFAULT_DECODE_LIMITS}.
 * @throws ForkwatchError `FORKWATCH_ERR_OTLP_DECODE` on malformed wire data (truncation, bad
 *   varints, unsupported wire types, wrong wire type for a known field, nesting past the limit).
 */
export function decodeProtobuf(buf: Uint8Array, limits?: Partial<DecodeLimits>): DecodeResult {
  const d = new WireDecoder(buf, resolveDecodeLimits(limits));
  d.request();
  return d.acc.result();
}

class WireDecoder {
  readonly acc = new DecodeAccumulator();
  private readonly buf: Uint8Array;
  /** The same bytes as a Buffer, for Node's native hex and UTF-8 slicing. */
  private readonly nb: Buffer;
  private readonly dv: DataView;
  private readonly lim: DecodeLimits;
  private pos = 0;
  // Where we are, for error messages only.
  private rsIdx = -1;
  private ssIdx = -1;
  private spIdx = -1;
  /** Remaining UTF-16 units an array/kvlist attribute may still add before it is cut. */
  private budget = 0;

  constructor(buf: Uint8Array, lim: DecodeLimits) {
    this.buf = buf;
    this.nb = Buffer.isBuffer(buf) ? buf : Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
    this.dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    this.lim = lim;
  }

  request(): void {
    const end = this.buf.length;
    while (this.pos < end) {
      const tag = this.u32(end);
      if (tag >>> 3 === 1) {
        this.expect(tag, WT_LEN, 'resource_spans');
        const e = this.lenEnd(end);
        this.rsIdx++;
        this.resourceSpans(this.pos, e);
        this.pos = e;
      } else {
        this.skip(tag, end);
      }
    }
  }

  // ResourceSpans{resource=1, scope_spans=2, schema_url=3}
  private resourceSpans(start: number, end: number): void {
    // Pass 1 finds the resource wherever it is (encoders put it first, the spec does not say so).
    let service = UNKNOWN_SERVICE;
    this.pos = start;
    while (this.pos < end) {
      const tag = this.u32(end);
      if (tag >>> 3 === 1) {
        this.expect(tag, WT_LEN, 'resource');
        const e = this.lenEnd(end);
        const found = this.resourceServiceName(this.pos, e);
        if (found !== undefined) service = found;
        this.pos = e;
      } else {
        this.skip(tag, end);
      }
    }
    this.ssIdx = -1;
    this.pos = start;
    while (this.pos < end) {
      const tag = this.u32(end);
      if (tag >>> 3 === 2) {
        this.expect(tag, WT_LEN, 'scope_spans');
        const e = this.lenEnd(end);
        this.ssIdx++;
        this.scopeSpans(this.pos, e, service);
        this.pos = e;
      } else {
        this.skip(tag, end);
      }
    }
    this.ssIdx = -1;
  }

  // Resource{attributes=1 KeyValue}: only service.name is wanted; other keys are compared as bytes.
  private resourceServiceName(start: number, end: number): string | undefined {
    let service: string | undefined;
    this.pos = start;
    while (this.pos < end) {
      const tag = this.u32(end);
      if (tag >>> 3 === 1) {
        this.expect(tag, WT_LEN, 'resource.attributes');
        const e = this.lenEnd(end);
        if (service === undefined) service = this.serviceNameOf(this.pos, e);
        this.pos = e;
      } else {
        this.skip(tag, end);
      }
    }
    return service;
  }

  private serviceNameOf(start: number, end: number): string | undefined {
    let keyS = -1;
    let keyE = -1;
    let valS = -1;
    let valE = -1;
    this.pos = start;
    while (this.pos < end) {
      const tag = this.u32(end);
      const f = tag >>> 3;
      if (f === 1 || f === 2) {
        this.expect(tag, WT_LEN, f === 1 ? 'key' : 'value');
        const e = this.lenEnd(end);
        if (f === 1) {
          keyS = this.pos;
          keyE = e;
        } else {
          valS = this.pos;
          valE = e;
        }
        this.pos = e;
      } else {
        this.skip(tag, end);
      }
    }
    if (valS < 0 || !this.bytesEqual(keyS, keyE, SERVICE_NAME)) return undefined;
    const v = this.anyValue(valS, valE, 1, true);
    return typeof v === 'string' && v !== '' ? v : undefined;
  }

  // ScopeSpans{scope=1, spans=2, schema_url=3}
  private scopeSpans(start: number, end: number, service: string): void {
    this.spIdx = -1;
    this.pos = start;
    while (this.pos < end) {
      const tag = this.u32(end);
      if (tag >>> 3 === 2) {
        this.expect(tag, WT_LEN, 'spans');
        const e = this.lenEnd(end);
        this.spIdx++;
        this.span(this.pos, e, service);
        this.pos = e;
      } else {
        this.skip(tag, end);
      }
    }
    this.spIdx = -1;
  }

  // Span: locate fields first; decide foreign by name bytes; decode attributes only for ours.
  private span(start: number, end: number, service: string): void {
    const acc = this.acc;
    acc.total++;
    let traceS = -1;
    let traceE = -1;
    let spanS = -1;
    let spanE = -1;
    let parS = -1;
    let parE = -1;
    let nameS = -1;
    let nameE = -1;
    let attrFirst = -1;
    let startMs = 0;
    let endMs = 0;
    this.pos = start;
    while (this.pos < end) {
      const tagPos = this.pos;
      const tag = this.u32(end);
      switch (tag >>> 3) {
        case 1:
          this.expect(tag, WT_LEN, 'trace_id');
          traceE = this.lenEnd(end);
          traceS = this.pos;
          this.pos = traceE;
          break;
        case 2:
          this.expect(tag, WT_LEN, 'span_id');
          spanE = this.lenEnd(end);
          spanS = this.pos;
          this.pos = spanE;
          break;
        case 4:
          this.expect(tag, WT_LEN, 'parent_span_id');
          parE = this.lenEnd(end);
          parS = this.pos;
          this.pos = parE;
          break;
        case 5:
          this.expect(tag, WT_LEN, 'name');
          nameE = this.lenEnd(end);
          nameS = this.pos;
          this.pos = nameE;
          if (!this.hasPrefix(nameS, nameE)) {
            acc.foreign++;
            return;
          }
          break;
        case 7:
          this.expect(tag, WT_I64, 'start_time_unix_nano');
          startMs = this.fixed64Ms(end);
          break;
        case 8:
          this.expect(tag, WT_I64, 'end_time_unix_nano');
          endMs = this.fixed64Ms(end);
          break;
        case 9:
          this.expect(tag, WT_LEN, 'attributes');
          if (attrFirst < 0) attrFirst = tagPos;
          this.pos = this.lenEnd(end);
          break;
        default:
          this.skip(tag, end);
      }
    }
    if (nameS < 0) {
      acc.foreign++;
      return;
    }
    if (traceE - traceS !== 16 || isAllZero(this.buf, traceS, traceE)) return acc.reject('invalid_trace_id');
    if (spanE - spanS !== 8 || isAllZero(this.buf, spanS, spanE)) return acc.reject('invalid_span_id');
    let parentSpanId = '';
    if (parE - parS === 8) parentSpanId = hexSlice(this.nb, parS, parE);
    else if (parE !== parS) return acc.reject('invalid_parent_span_id');

    const attributes: Record<string, AttrValue> = {};
    if (attrFirst >= 0) {
      // Too deep a value rejects this span only: the body is valid protobuf (the OTLP answer is partial success).
      this.inSpanAttributes = true;
      try {
        this.attributes(attrFirst, end, attributes);
      } catch (err) {
        if (err instanceof AttributeTooDeep) return acc.reject('attribute_too_deep');
        throw err;
      } finally {
        this.inSpanAttributes = false;
      }
    }
    const rec: SpanRecord = {
      traceId: hexSlice(this.nb, traceS, traceE),
      spanId: hexSlice(this.nb, spanS, spanE),
      parentSpanId,
      name: this.str(nameS, nameE, this.lim.maxSpanNameLength),
      startMs,
      endMs,
      service,
      attributes,
    };
    acc.offer(rec);
  }

  private attributes(start: number, end: number, out: Record<string, AttrValue>): void {
    const max = this.lim.maxAttributesPerSpan;
    let kept = 0;
    this.pos = start;
    while (this.pos < end && kept < max) {
      const tag = this.u32(end);
      if (tag >>> 3 === 9) {
        const e = this.lenEnd(end);
        if (this.keyValue(this.pos, e, out)) kept++;
        this.pos = e;
      } else {
        this.skip(tag, end);
      }
    }
  }

  // KeyValue{key=1, value=2 AnyValue}; returns whether an attribute was set.
  private keyValue(start: number, end: number, out: Record<string, AttrValue>): boolean {
    let key: string | undefined;
    let valS = -1;
    let valE = -1;
    this.pos = start;
    while (this.pos < end) {
      const tag = this.u32(end);
      const f = tag >>> 3;
      if (f === 1) {
        this.expect(tag, WT_LEN, 'attribute key');
        const e = this.lenEnd(end);
        key = this.str(this.pos, e, this.lim.maxAttributeKeyLength);
        this.pos = e;
      } else if (f === 2) {
        this.expect(tag, WT_LEN, 'attribute value');
        valE = this.lenEnd(end);
        valS = this.pos;
        this.pos = valE;
      } else {
        this.skip(tag, end);
      }
    }
    if (key === undefined || valS < 0) return false;
    const v = this.anyValue(valS, valE, 1, REPEATING_VALUE_KEYS.has(key));
    if (v === undefined) return false;
    setAttribute(out, key, v);
    return true;
  }

  // AnyValue{string=1, bool=2, int=3, double=4, array=5, kvlist=6, bytes=7}; oneof: last wins.
  // `intern`: serve a short string value from the string table (see REPEATING_VALUE_KEYS).
  private anyValue(start: number, end: number, depth: number, intern = false): AttrValue | undefined {
    if (depth > this.lim.maxNestingDepth) this.tooDeep();
    let v: AttrValue | undefined;
    this.pos = start;
    while (this.pos < end) {
      const tag = this.u32(end);
      const f = tag >>> 3;
      if (f === 5 || f === 6) {
        this.expect(tag, WT_LEN, f === 5 ? 'array_value' : 'kvlist_value');
        const e = this.lenEnd(end);
        this.budget = this.lim.maxAttributeValueLength;
        const js = f === 5 ? this.arrayToJs(this.pos, e, depth + 1) : this.kvlistToJs(this.pos, e, depth + 1);
        v = cutString(JSON.stringify(js), this.lim.maxAttributeValueLength);
        this.pos = e;
      } else if (f >= 1 && f <= 7) {
        v = this.scalarField(tag, end, intern);
      } else {
        this.skip(tag, end);
      }
    }
    return v;
  }

  // The JSON-able form of an AnyValue inside an array or kvlist; null for an empty AnyValue.
  private anyToJs(start: number, end: number, depth: number): unknown {
    if (depth > this.lim.maxNestingDepth) this.tooDeep();
    let v: unknown = null;
    this.pos = start;
    while (this.pos < end) {
      const tag = this.u32(end);
      const f = tag >>> 3;
      if (f === 5 || f === 6) {
        this.expect(tag, WT_LEN, f === 5 ? 'array_value' : 'kvlist_value');
        const e = this.lenEnd(end);
        v = f === 5 ? this.arrayToJs(this.pos, e, depth + 1) : this.kvlistToJs(this.pos, e, depth + 1);
        this.pos = e;
      } else if (f >= 1 && f <= 7) {
        v = this.scalarField(tag, end);
      } else {
        this.skip(tag, end);
      }
    }
    this.budget -= typeof v === 'string' ? v.length + 2 : 8;
    return v;
  }

  /** Decodes the scalar AnyValue field (1-4, 7) whose tag was just read; leaves pos after it. */
  private scalarField(tag: number, end: number, intern = false): AttrValue {
    switch (tag >>> 3) {
      case 1: {
        this.expect(tag, WT_LEN, 'string_value');
        const e = this.lenEnd(end);
        const v = this.str(this.pos, e, this.lim.maxAttributeValueLength, intern);
        this.pos = e;
        return v;
      }
      case 2:
        this.expect(tag, WT_VARINT, 'bool_value');
        return this.varintNonZero(end);
      case 3:
        this.expect(tag, WT_VARINT, 'int_value');
        return this.int64(end);
      case 4:
        this.expect(tag, WT_I64, 'double_value');
        this.need(8, end);
        this.pos += 8;
        return this.dv.getFloat64(this.pos - 8, true);
      default: {
        this.expect(tag, WT_LEN, 'bytes_value');
        const e = this.lenEnd(end);
        const v = this.base64(this.pos, e);
        this.pos = e;
        return v;
      }
    }
  }

  // ArrayValue{values=1 AnyValue}
  private arrayToJs(start: number, end: number, depth: number): unknown[] {
    const out: unknown[] = [];
    this.pos = start;
    while (this.pos < end && this.budget > 0) {
      const tag = this.u32(end);
      if (tag >>> 3 === 1) {
        this.expect(tag, WT_LEN, 'array values');
        const e = this.lenEnd(end);
        out.push(this.anyToJs(this.pos, e, depth));
        this.pos = e;
      } else {
        this.skip(tag, end);
      }
    }
    return out;
  }

  // KeyValueList{values=1 KeyValue}
  private kvlistToJs(start: number, end: number, depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    this.pos = start;
    while (this.pos < end && this.budget > 0) {
      const tag = this.u32(end);
      if (tag >>> 3 === 1) {
        this.expect(tag, WT_LEN, 'kvlist values');
        const e = this.lenEnd(end);
        this.kvToJs(this.pos, e, depth, out);
        this.pos = e;
      } else {
        this.skip(tag, end);
      }
    }
    return out;
  }

  private kvToJs(start: number, end: number, depth: number, out: Record<string, unknown>): void {
    let key = '';
    let valS = -1;
    let valE = -1;
    this.pos = start;
    while (this.pos < end) {
      const tag = this.u32(end);
      const f = tag >>> 3;
      if (f === 1 || f === 2) {
        this.expect(tag, WT_LEN, f === 1 ? 'kvlist key' : 'kvlist value');
        const e = this.lenEnd(end);
        if (f === 1) key = this.str(this.pos, e, this.lim.maxAttributeKeyLength);
        else {
          valS = this.pos;
          valE = e;
        }
        this.pos = e;
      } else {
        this.skip(tag, end);
      }
    }
    const v = valS < 0 ? null : this.anyToJs(valS, valE, depth);
    this.budget -= key.length + 3;
    Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
  }

  // ---- wire primitives ----

  /** Reads a varint that must fit 32 bits (tags, lengths). */
  private u32(end: number): number {
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
  private int64(end: number): number | string {
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

  private varintNonZero(end: number): boolean {
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

  private fixed64Ms(end: number): number {
    this.need(8, end);
    const lo = this.dv.getUint32(this.pos, true);
    const hi = this.dv.getUint32(this.pos + 4, true);
    this.pos += 8;
    return (hi * TWO_32 + lo) / NS_PER_MS;
  }

  /** Reads a length prefix and returns the end of the field's bytes, checked against `end`. */
  private lenEnd(end: number): number {
    const len = this.u32(end);
    if (len > end - this.pos) this.fail(`length ${len} runs past the end of its message`);
    return this.pos + len;
  }

  private need(n: number, end: number): void {
    if (end - this.pos < n) this.fail('truncated fixed-width field');
  }

  private skip(tag: number, end: number): void {
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

  private expect(tag: number, wt: number, field: string): void {
    if ((tag & 7) !== wt) this.fail(`${field} has wire type ${tag & 7}, expected ${wt}`);
  }

  private hasPrefix(s: number, e: number): boolean {
    if (e - s < PREFIX.length) return false;
    const buf = this.buf;
    for (let i = 0; i < PREFIX.length; i++) if (buf[s + i] !== PREFIX[i]) return false;
    return true;
  }

  private bytesEqual(s: number, e: number, want: Uint8Array): boolean {
    if (s < 0 || e - s !== want.length) return false;
    for (let i = 0; i < want.length; i++) if (this.buf[s + i] !== want[i]) return false;
    return true;
  }

  /**
   * UTF-8 `buf[s, e)` cut to `max` UTF-16 units; decodes at most the bytes that can matter.
   * `intern`: serve short strings from the shared table (keys, names).
   */
  private str(s: number, e: number, max: number, intern = true): string {
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

  private base64(s: number, e: number): string {
    const max = this.lim.maxAttributeValueLength;
    // 3 bytes become 4 base64 chars: encode only what survives the cut.
    const cap = Math.ceil(max / 4) * 3;
    if (e - s > cap) e = s + cap;
    return cutString(Buffer.from(this.buf.buffer, this.buf.byteOffset + s, e - s).toString('base64'), max);
  }

  private inSpanAttributes = false;

  private tooDeep(): never {
    if (this.inSpanAttributes) throw new AttributeTooDeep();
    this.fail(`attribute nesting deeper than ${this.lim.maxNestingDepth}`);
  }

  private fail(msg: string): never {
    let where = 'request';
    if (this.rsIdx >= 0) where = `resource_spans[${this.rsIdx}]`;
    if (this.ssIdx >= 0) where += `.scope_spans[${this.ssIdx}]`;
    if (this.spIdx >= 0) where += `.spans[${this.spIdx}]`;
    throw createError('FORKWATCH_ERR_OTLP_DECODE', `${where}: ${msg} (byte ${this.pos})`);
  }
}
