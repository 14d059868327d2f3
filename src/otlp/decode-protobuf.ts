import type { AttrValue, SpanRecord } from '../model/span-record.js';
import { SPAN_NAME_PREFIX } from '@forkwatch/instrumentation/semconv';
import { AttributeShapes, SCHEMA_ATTRIBUTE_KEYS, schemaKeyIndex } from './attribute-shapes.js';
import { DecodeAccumulator } from './decode-accumulator.js';
import { resolveDecodeLimits } from './decode-limits.js';
import type { DecodeLimits } from './decode-limits.js';
import { AttributeTooDeep, type DecodeResult } from './decode-result.js';
import { isAllZero } from './is-all-zero.js';
import { REPEATING_VALUE_KEYS } from './repeating-values.js';
import { StringTable } from './string-table.js';
import { AnyValueReader } from './protobuf/any-value-reader.js';
import { hex16, hex8 } from './protobuf/hex-ids.js';
import { WT_I64, WT_LEN } from './protobuf/wire-reader.js';

// Field numbers are written from the OTLP spec (opentelemetry-proto, trace/v1 and common/v1);
// no .proto file or generated code is used.
const UNKNOWN_SERVICE = 'unknown_service';
const PREFIX = new TextEncoder().encode(SPAN_NAME_PREFIX);
const SERVICE_NAME = new TextEncoder().encode('service.name');
/** Longest attribute key served from {@link KEYS}, bytes. */
const KEY_TABLE_MAX_BYTES = 64;
const TAG_REPEATING = 1;
// A key's tag is one byte: bit 0 whether its values repeat, the rest its schema index + 1.
if (SCHEMA_ATTRIBUTE_KEYS.length > 126) throw new Error('schema attribute keys no longer fit a string-table tag');
// Attribute keys apart from values: unique values (session keys, event ids) cannot evict a key.
// A key's tag says whether its values repeat and which schema key it is, so a span's keys cost
// one lookup each, not three.
const KEYS = new StringTable(1024, KEY_TABLE_MAX_BYTES, (k) => (REPEATING_VALUE_KEYS.has(k) ? TAG_REPEATING : 0) | ((schemaKeyIndex(k) + 1) << 1));
// Shared by all requests (decoding is synchronous): the shapes it learnt serve the next batches.
const SHAPES = new AttributeShapes();

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

/** The envelope walk `request -> resourceSpans -> scopeSpans -> spans`, and each span. */
class WireDecoder extends AnyValueReader {
  readonly acc = new DecodeAccumulator();
  // The previous forkwatch span's trace id: the spans of one exchange share it and usually follow
  // each other in a batch, so most spans reuse its string instead of converting 16 bytes to hex.
  private lastTraceS = -1;
  private lastTraceId = '';
  private lastParentS = -1;
  private lastParentId = '';

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
    if (parE - parS === 8) parentSpanId = this.parentIdAt(parS);
    else if (parE !== parS) return acc.reject('invalid_parent_span_id');

    let attributes: Record<string, AttrValue>;
    let side: AttrValue | undefined;
    if (attrFirst < 0) attributes = {};
    else {
      // Too deep a value rejects this span only: the body is valid protobuf (the OTLP answer is partial success).
      this.inSpanAttributes = true;
      try {
        SHAPES.begin();
        this.attributes(attrFirst, end);
        attributes = SHAPES.build();
        side = SHAPES.side;
      } catch (err) {
        if (err instanceof AttributeTooDeep) return acc.reject('attribute_too_deep');
        throw err;
      } finally {
        this.inSpanAttributes = false;
      }
    }
    const rec: SpanRecord = {
      traceId: this.traceIdAt(traceS),
      spanId: hex8(this.buf, spanS),
      parentSpanId,
      name: this.str(nameS, nameE, this.lim.maxSpanNameLength),
      startMs,
      endMs,
      service,
      attributes,
    };
    acc.offer(rec, side);
  }

  /** Adds the span's attributes to SHAPES, in wire order. */
  private attributes(start: number, end: number): void {
    const max = this.lim.maxAttributesPerSpan;
    let kept = 0;
    this.pos = start;
    const buf = this.buf;
    while (this.pos < end && kept < max) {
      // attributes (0x4a) with a one-byte length inside the span, as SDKs write them: no varint reads.
      const p = this.pos;
      const len = buf[p + 1]!;
      if (buf[p] === 0x4a && p + 2 <= end && len < 0x80 && p + 2 + len <= end) {
        const e = p + 2 + len;
        if (this.keyValue(p + 2, e)) kept++;
        this.pos = e;
        continue;
      }
      const tag = this.u32(end);
      if (tag >>> 3 === 9) {
        const e = this.lenEnd(end);
        if (this.keyValue(this.pos, e)) kept++;
        this.pos = e;
      } else {
        this.skip(tag, end);
      }
    }
  }

  // KeyValue{key=1, value=2 AnyValue}; returns whether an attribute was set.
  private keyValue(start: number, end: number): boolean {
    // The encoding every SDK writes: key (tag 0x0a, one-byte length), then value (tag 0x12,
    // one-byte length) ending the KeyValue. Anything else, or a key the table does not serve,
    // takes the general walk, which gives the same result.
    const buf = this.buf;
    // The shortest such KeyValue is 4 bytes; below that the bytes read next belong to another field.
    if (end - start < 4) return this.keyValueWalk(start, end);
    const kl = buf[start + 1]!;
    const ks = start + 2;
    const ke = ks + kl;
    if (buf[start] !== 0x0a || kl >= 0x80 || kl > KEY_TABLE_MAX_BYTES || this.lim.maxAttributeKeyLength < KEY_TABLE_MAX_BYTES || ke + 2 > end || buf[ke] !== 0x12 || buf[ke + 1]! >= 0x80 || ke + 2 + buf[ke + 1]! !== end) {
      return this.keyValueWalk(start, end);
    }
    const key = this.interned(KEYS, ks, ke);
    const tag = KEYS.lastTag;
    const v = this.value(ke + 2, end, (tag & TAG_REPEATING) !== 0);
    if (v === undefined) return false;
    SHAPES.add(key, (tag >>> 1) - 1, v);
    return true;
  }

  /**
   * An attribute's AnyValue at `[s, e)`. A lone string with a one-byte length (most values) is
   * read here; every other form goes through anyValue.
   */
  private value(s: number, e: number, intern: boolean): AttrValue | undefined {
    const buf = this.buf;
    if (e - s >= 2 && buf[s] === 0x0a && buf[s + 1]! < 0x80 && s + 2 + buf[s + 1]! === e) {
      this.pos = e;
      return this.str(s + 2, e, this.lim.maxAttributeValueLength, intern);
    }
    return this.anyValue(s, e, 1, intern);
  }

  private keyValueWalk(start: number, end: number): boolean {
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
    SHAPES.add(key, schemaKeyIndex(key), v);
    return true;
  }

  /** The hex trace id of the 16 bytes at `s` (checked by the caller). */
  private traceIdAt(s: number): string {
    const p = this.lastTraceS;
    if (p >= 0) {
      const dv = this.dv;
      if (dv.getInt32(s, true) === dv.getInt32(p, true) && dv.getInt32(s + 4, true) === dv.getInt32(p + 4, true) && dv.getInt32(s + 8, true) === dv.getInt32(p + 8, true) && dv.getInt32(s + 12, true) === dv.getInt32(p + 12, true)) {
        return this.lastTraceId;
      }
    }
    this.lastTraceS = s;
    this.lastTraceId = hex16(this.buf, s);
    return this.lastTraceId;
  }

  /** The hex parent span id of the 8 bytes at `s`: the spans of one exchange share their parent, as they share the trace. */
  private parentIdAt(s: number): string {
    const p = this.lastParentS;
    if (p >= 0) {
      const dv = this.dv;
      if (dv.getInt32(s, true) === dv.getInt32(p, true) && dv.getInt32(s + 4, true) === dv.getInt32(p + 4, true)) return this.lastParentId;
    }
    this.lastParentS = s;
    this.lastParentId = hex8(this.buf, s);
    return this.lastParentId;
  }

  private hasPrefix(s: number, e: number): boolean {
    if (e - s < PREFIX.length) return false;
    const buf = this.buf;
    for (let i = 0; i < PREFIX.length; i++) if (buf[s + i] !== PREFIX[i]) return false;
    return true;
  }
}
