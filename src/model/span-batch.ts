import { ATTR_SIDE } from '@forkwatch/instrumentation/semconv';
import { schemaKeyIndex } from './schema-keys.js';
import type { AttrValue, SpanRecord } from './span-record.js';

const SIDE = schemaKeyIndex(ATTR_SIDE);

/**
 * Forkwatch spans as the correlation engine takes them: one row per span, in columns, so that a
 * request's spans cost a few growing arrays instead of two objects each (a span record and its
 * attribute record, about a third of what the detector allocated per span). Attributes are kept
 * in wire order with each key's schema index ({@link schemaKeyIndex}, -1 outside the schema): the
 * engine reads a row's schema attributes by index, and the rows can be turned back into
 * {@link SpanRecord}s with the same keys in the same order (the decoders' `spans`).
 *
 * Written by a decoder ({@link addAttribute} per attribute, then {@link endRow}), or built from
 * records ({@link of}); read-only afterwards.
 */
export class SpanBatch {
  /** Rows. */
  length = 0;
  readonly traceId: string[] = [];
  readonly spanId: string[] = [];
  readonly parentSpanId: string[] = [];
  readonly name: string[] = [];
  /** Start time, Unix epoch milliseconds. */
  readonly startMs: number[] = [];
  /** End time, Unix epoch milliseconds. */
  readonly endMs: number[] = [];
  readonly service: string[] = [];
  /** Each row's `forkwatch.side` attribute as it came (the decoders accept only `client` and `server`). */
  readonly side: Array<AttrValue | undefined> = [];
  /** Row i's attributes are entries `[attrStart[i], attrStart[i + 1])` of keys, keyIndex and values. */
  readonly attrStart: number[] = [0];
  readonly keys: string[] = [];
  readonly keyIndex: number[] = [];
  readonly values: AttrValue[] = [];

  /** The records' rows (attributes in their own key order); what is not a record (null, no attributes) is left out. */
  static of(spans: readonly SpanRecord[]): SpanBatch {
    const b = new SpanBatch();
    for (const s of spans) {
      try {
        const a = s.attributes;
        for (const k of Object.keys(a)) b.addAttribute(k, schemaKeyIndex(k), a[k]!);
        b.endRow(s.traceId, s.spanId, s.parentSpanId, s.name, s.startMs, s.endMs, s.service);
      } catch {
        // The engine ignores what it cannot use; a malformed record must not stop the others.
        b.dropAttributes();
      }
    }
    return b;
  }

  /** One attribute of the row being written, in wire order; `index` is its key's schema index (-1 outside it). */
  addAttribute(key: string, index: number, value: AttrValue): void {
    this.keys.push(key);
    this.keyIndex.push(index);
    this.values.push(value);
  }

  /** `forkwatch.side` of the row being written (the last value given, as in a record): undefined when absent. */
  pendingSide(): AttrValue | undefined {
    const idx = this.keyIndex;
    for (let j = idx.length - 1, from = this.attrStart[this.length]!; j >= from; j--) if (idx[j] === SIDE) return this.values[j];
    return undefined;
  }

  /** Forgets the attributes added since the last row ended (a rejected span). */
  dropAttributes(): void {
    const n = this.attrStart[this.length]!;
    this.keys.length = n;
    this.keyIndex.length = n;
    this.values.length = n;
  }

  /** Ends the row whose attributes were added since the previous one. */
  endRow(traceId: string, spanId: string, parentSpanId: string, name: string, startMs: number, endMs: number, service: string): void {
    this.side.push(this.pendingSide());
    this.traceId.push(traceId);
    this.spanId.push(spanId);
    this.parentSpanId.push(parentSpanId);
    this.name.push(name);
    this.startMs.push(startMs);
    this.endMs.push(endMs);
    this.service.push(service);
    this.attrStart.push(this.keys.length);
    this.length++;
  }

  /** Rows `[from, to)` as a batch of their own. */
  slice(from: number, to: number): SpanBatch {
    const b = new SpanBatch();
    to = Math.min(to, this.length);
    for (let i = Math.max(0, from); i < to; i++) {
      for (let j = this.attrStart[i]!, e = this.attrStart[i + 1]!; j < e; j++) b.addAttribute(this.keys[j]!, this.keyIndex[j]!, this.values[j]!);
      b.endRow(this.traceId[i]!, this.spanId[i]!, this.parentSpanId[i]!, this.name[i]!, this.startMs[i]!, this.endMs[i]!, this.service[i]!);
    }
    return b;
  }
}
