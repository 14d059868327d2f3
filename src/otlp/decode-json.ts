import type { AttrValue, SpanRecord } from '../model/span-record.js';
import { createError } from '../errors.js';
import { ATTR_SIDE, SPAN_NAME_PREFIX } from '@forkwatch/instrumentation/semconv';
import { DecodeAccumulator, setAttribute } from './decode-accumulator.js';
import { resolveDecodeLimits } from './decode-limits.js';
import type { DecodeLimits } from './decode-limits.js';
import { AttributeTooDeep, type DecodeResult } from './decode-result.js';
import { cutString } from './cut-string.js';

const UNKNOWN_SERVICE = 'unknown_service';
const NS_PER_MS = 1e6;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const HEX_RE = /^[0-9a-fA-F]*$/;
const BASE64_RE = /^[A-Za-z0-9+/_-]*={0,2}$/;
const INT_RE = /^-?[0-9]+$/;

type Json = Record<string, unknown>;

/**
 * Decodes an OTLP/JSON `ExportTraceServiceRequest` into forkwatch {@link SpanRecord}s.
 *
 * Accepts lowerCamelCase and snake_case keys, trace/span ids as hex (the OTLP/JSON rule) or as
 * base64 (the generic protobuf JSON mapping), int64 as a string or a number, enums as ints.
 * Foreign spans are counted and skipped before their attributes are looked at.
 *
 * @param text the request body (UTF-8), already decompressed.
 * @param limits overrides of {@link DEFAULT_DECODE_LIMITS}.
 * @throws ForkwatchError `FORKWATCH_ERR_OTLP_DECODE` on invalid JSON or values of the wrong
 *   shape (an array where an object belongs, a non-numeric time, nesting past the limit).
 */
export function decodeJson(text: string | Uint8Array, limits?: Partial<DecodeLimits>): DecodeResult {
  const lim = resolveDecodeLimits(limits);
  const src =
    typeof text === 'string' ? text : Buffer.from(text.buffer, text.byteOffset, text.byteLength).toString('utf8');
  let root: unknown;
  try {
    root = JSON.parse(src.charCodeAt(0) === 0xfeff ? src.slice(1) : src);
  } catch (err) {
    throw createError('FORKWATCH_ERR_OTLP_DECODE', `invalid JSON: ${(err as Error).message}`);
  }
  const w = new JsonWalker(lim);
  w.request(root);
  return w.acc.result();
}

class JsonWalker {
  readonly acc = new DecodeAccumulator();
  private readonly lim: DecodeLimits;
  private path = 'request';
  private budget = 0;

  constructor(lim: DecodeLimits) {
    this.lim = lim;
  }

  request(root: unknown): void {
    const req = this.object(root, 'request');
    const rss = this.array(field(req, 'resourceSpans', 'resource_spans'), 'resourceSpans');
    for (let i = 0; i < rss.length; i++) {
      this.path = `resourceSpans[${i}]`;
      const rs = this.object(rss[i], 'ResourceSpans');
      const service = this.serviceName(field(rs, 'resource', 'resource'));
      const sss = this.array(field(rs, 'scopeSpans', 'scope_spans'), 'scopeSpans');
      for (let j = 0; j < sss.length; j++) {
        this.path = `resourceSpans[${i}].scopeSpans[${j}]`;
        const ss = this.object(sss[j], 'ScopeSpans');
        const spans = this.array(field(ss, 'spans', 'spans'), 'spans');
        for (let k = 0; k < spans.length; k++) {
          this.path = `resourceSpans[${i}].scopeSpans[${j}].spans[${k}]`;
          this.span(this.object(spans[k], 'Span'), service);
        }
      }
    }
  }

  private serviceName(resource: unknown): string {
    if (resource === undefined || resource === null) return UNKNOWN_SERVICE;
    const attrs = this.array(field(this.object(resource, 'resource'), 'attributes', 'attributes'), 'resource.attributes');
    for (const kv of attrs) {
      const o = this.object(kv, 'KeyValue');
      if (o.key !== 'service.name') continue;
      const v = this.anyValue(o.value, 1);
      return typeof v === 'string' && v !== '' ? v : UNKNOWN_SERVICE;
    }
    return UNKNOWN_SERVICE;
  }

  private span(o: Json, service: string): void {
    const acc = this.acc;
    acc.total++;
    const rawName = o.name;
    if (rawName !== undefined && rawName !== null && typeof rawName !== 'string') this.fail('name is not a string');
    if (typeof rawName !== 'string' || !rawName.startsWith(SPAN_NAME_PREFIX)) {
      acc.foreign++;
      return;
    }
    const traceId = this.id(field(o, 'traceId', 'trace_id'), 16, 'traceId');
    if (traceId === undefined || /^0+$/.test(traceId)) return acc.reject('invalid_trace_id');
    const spanId = this.id(field(o, 'spanId', 'span_id'), 8, 'spanId');
    if (spanId === undefined || /^0+$/.test(spanId)) return acc.reject('invalid_span_id');
    const rawParent = field(o, 'parentSpanId', 'parent_span_id');
    let parentSpanId = '';
    if (rawParent !== undefined && rawParent !== null && rawParent !== '') {
      const p = this.id(rawParent, 8, 'parentSpanId');
      if (p === undefined) return acc.reject('invalid_parent_span_id');
      parentSpanId = p;
    }
    const startMs = this.timeMs(field(o, 'startTimeUnixNano', 'start_time_unix_nano'), 'startTimeUnixNano');
    const endMs = this.timeMs(field(o, 'endTimeUnixNano', 'end_time_unix_nano'), 'endTimeUnixNano');
    const attributes: Record<string, AttrValue> = {};
    const rawAttrs = o.attributes;
    if (rawAttrs !== undefined && rawAttrs !== null) {
      const list = this.array(rawAttrs, 'attributes');
      let kept = 0;
      // Too deep a value rejects this span only; the rest of the batch is kept (partial success).
      this.inSpanAttributes = true;
      try {
        for (let i = 0; i < list.length && kept < this.lim.maxAttributesPerSpan; i++) {
          const kv = this.object(list[i], 'KeyValue');
          if (typeof kv.key !== 'string') this.fail('attribute key is not a string');
          const v = this.anyValue(kv.value, 1);
          if (v === undefined) continue;
          setAttribute(attributes, cutString(kv.key, this.lim.maxAttributeKeyLength), v);
          kept++;
        }
      } catch (err) {
        if (err instanceof AttributeTooDeep) return acc.reject('attribute_too_deep');
        throw err;
      } finally {
        this.inSpanAttributes = false;
      }
    }
    const rec: SpanRecord = {
      traceId,
      spanId,
      parentSpanId,
      name: cutString(rawName, this.lim.maxSpanNameLength),
      startMs,
      endMs,
      service,
      attributes,
    };
    acc.offer(rec, rec.attributes[ATTR_SIDE]);
  }

  /** Lowercase hex of an id given as hex or base64; undefined when it is not `bytes` long. */
  private id(v: unknown, bytes: number, what: string): string | undefined {
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') this.fail(`${what} is not a string`);
    if (v.length === bytes * 2 && HEX_RE.test(v)) return v.toLowerCase();
    if (v.length === Math.ceil(bytes / 3) * 4 && BASE64_RE.test(v)) {
      const b = Buffer.from(v, 'base64');
      if (b.length === bytes) return b.toString('hex');
    }
    return undefined;
  }

  private timeMs(v: unknown, what: string): number {
    if (v === undefined || v === null) return 0;
    if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return v / NS_PER_MS;
    if (typeof v === 'string' && /^[0-9]+$/.test(v)) return Number(v) / NS_PER_MS;
    this.fail(`${what} is not a uint64`);
  }

  // AnyValue: {stringValue|boolValue|intValue|doubleValue|arrayValue|kvlistValue|bytesValue}
  private anyValue(raw: unknown, depth: number): AttrValue | undefined {
    if (depth > this.lim.maxNestingDepth) this.tooDeep();
    if (raw === undefined || raw === null) return undefined;
    const o = this.object(raw, 'AnyValue');
    const arr = field(o, 'arrayValue', 'array_value');
    const kvl = field(o, 'kvlistValue', 'kvlist_value');
    if ((arr !== undefined && arr !== null) || (kvl !== undefined && kvl !== null)) {
      this.budget = this.lim.maxAttributeValueLength;
      const js = arr !== undefined && arr !== null ? this.arrayToJs(arr, depth + 1) : this.kvlistToJs(kvl, depth + 1);
      return cutString(JSON.stringify(js), this.lim.maxAttributeValueLength);
    }
    return this.scalar(o);
  }

  private scalar(o: Json): AttrValue | undefined {
    const max = this.lim.maxAttributeValueLength;
    const s = field(o, 'stringValue', 'string_value');
    if (s !== undefined && s !== null) {
      if (typeof s !== 'string') this.fail('stringValue is not a string');
      return cutString(s, max);
    }
    const b = field(o, 'boolValue', 'bool_value');
    if (b !== undefined && b !== null) {
      if (typeof b !== 'boolean') this.fail('boolValue is not a boolean');
      return b;
    }
    const i = field(o, 'intValue', 'int_value');
    if (i !== undefined && i !== null) return this.int64(i);
    const d = field(o, 'doubleValue', 'double_value');
    if (d !== undefined && d !== null) return this.double(d);
    const by = field(o, 'bytesValue', 'bytes_value');
    if (by !== undefined && by !== null) {
      if (typeof by !== 'string') this.fail('bytesValue is not a base64 string');
      return cutString(by, max);
    }
    return undefined;
  }

  private int64(v: unknown): number | string {
    if (typeof v === 'number') {
      if (!Number.isInteger(v)) this.fail('intValue is not an integer');
      if (Number.isSafeInteger(v)) return v;
      return this.bigint(BigInt(v));
    }
    if (typeof v === 'string' && INT_RE.test(v) && v.length <= 20) {
      const n = Number(v);
      if (Number.isSafeInteger(n)) return n;
      return this.bigint(BigInt(v));
    }
    this.fail('intValue is not an int64');
  }

  private bigint(b: bigint): string {
    if (b < INT64_MIN || b > INT64_MAX) this.fail('intValue out of int64 range');
    return b.toString();
  }

  private double(v: unknown): number {
    if (typeof v === 'number') return v;
    if (v === 'NaN') return NaN;
    if (v === 'Infinity') return Infinity;
    if (v === '-Infinity') return -Infinity;
    if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
    return this.fail('doubleValue is not a number');
  }

  private jsOf(raw: unknown, depth: number): unknown {
    if (depth > this.lim.maxNestingDepth) this.tooDeep();
    if (raw === undefined || raw === null) {
      this.budget -= 4;
      return null;
    }
    const o = this.object(raw, 'AnyValue');
    const arr = field(o, 'arrayValue', 'array_value');
    if (arr !== undefined && arr !== null) return this.arrayToJs(arr, depth + 1);
    const kvl = field(o, 'kvlistValue', 'kvlist_value');
    if (kvl !== undefined && kvl !== null) return this.kvlistToJs(kvl, depth + 1);
    const v = this.scalar(o) ?? null;
    this.budget -= typeof v === 'string' ? v.length + 2 : 8;
    return v;
  }

  private arrayToJs(raw: unknown, depth: number): unknown[] {
    const values = field(this.object(raw, 'ArrayValue'), 'values', 'values');
    const list = values === undefined || values === null ? [] : this.array(values, 'ArrayValue.values');
    const out: unknown[] = [];
    for (let i = 0; i < list.length && this.budget > 0; i++) out.push(this.jsOf(list[i], depth));
    return out;
  }

  private kvlistToJs(raw: unknown, depth: number): Record<string, unknown> {
    const values = field(this.object(raw, 'KeyValueList'), 'values', 'values');
    const list = values === undefined || values === null ? [] : this.array(values, 'KeyValueList.values');
    const out: Record<string, unknown> = {};
    for (let i = 0; i < list.length && this.budget > 0; i++) {
      const kv = this.object(list[i], 'KeyValue');
      const key = typeof kv.key === 'string' ? cutString(kv.key, this.lim.maxAttributeKeyLength) : '';
      this.budget -= key.length + 3;
      const value = this.jsOf(kv.value, depth);
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    }
    return out;
  }

  private object(v: unknown, what: string): Json {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) this.fail(`${what} is not an object`);
    return v as Json;
  }

  /** An array, or [] for an absent/null repeated field. */
  private array(v: unknown, what: string): unknown[] {
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) this.fail(`${what} is not an array`);
    return v;
  }

  private inSpanAttributes = false;

  private tooDeep(): never {
    if (this.inSpanAttributes) throw new AttributeTooDeep();
    this.fail(`attribute nesting deeper than ${this.lim.maxNestingDepth}`);
  }

  private fail(msg: string): never {
    throw createError('FORKWATCH_ERR_OTLP_DECODE', `${this.path}: ${msg}`);
  }
}

/** The value of a field under its lowerCamelCase name, else its snake_case name. */
function field(o: Json, camel: string, snake: string): unknown {
  const v = o[camel];
  return v === undefined ? o[snake] : v;
}
