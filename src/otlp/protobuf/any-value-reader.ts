import type { AttrValue } from '../../model/span-record.js';
import { cutString } from '../cut-string.js';
import { WireReader, WT_I64, WT_LEN, WT_VARINT } from './wire-reader.js';

/**
 * Decodes OTLP `AnyValue`s: scalars as they are, arrays and kvlists as their JSON text cut to
 * `maxAttributeValueLength` (the walk stops once the cut is certain), nesting bounded by
 * `maxNestingDepth`.
 */
export class AnyValueReader extends WireReader {
  /** Remaining UTF-16 units an array/kvlist attribute may still add before it is cut. */
  protected budget = 0;

  // AnyValue{string=1, bool=2, int=3, double=4, array=5, kvlist=6, bytes=7}; oneof: last wins.
  // `intern`: serve a short string value from the string table (see REPEATING_VALUE_KEYS).
  protected anyValue(start: number, end: number, depth: number, intern = false): AttrValue | undefined {
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
  protected anyToJs(start: number, end: number, depth: number): unknown {
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
  protected scalarField(tag: number, end: number, intern = false): AttrValue {
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
  protected arrayToJs(start: number, end: number, depth: number): unknown[] {
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
  protected kvlistToJs(start: number, end: number, depth: number): Record<string, unknown> {
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

  protected kvToJs(start: number, end: number, depth: number, out: Record<string, unknown>): void {
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

}
