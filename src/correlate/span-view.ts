import { SCHEMA_KEY_COUNT } from '../model/schema-keys.js';
import { SpanBatch } from '../model/span-batch.js';
import type { AttrValue, SpanRecord } from '../model/span-record.js';

/**
 * One row of a {@link SpanBatch} as the engine reads it, reused from row to row: the span's fields,
 * and its schema attributes in `a` at their schema index (`schemaKeyIndex`; undefined when absent,
 * the last value when a key came twice, as in a record). Every read is of one object shape and one
 * array, where reading each span's own attribute record went through V8's megamorphic keyed load.
 */
export class SpanView {
  traceId = '';
  spanId = '';
  parentSpanId = '';
  name = '';
  /** Start time, Unix epoch milliseconds. */
  startMs = 0;
  /** End time, Unix epoch milliseconds. */
  endMs = 0;
  service = '';
  readonly a: Array<AttrValue | undefined> = new Array<AttrValue | undefined>(SCHEMA_KEY_COUNT).fill(undefined);
  /** Slots of `a` the current row set. */
  private readonly set: number[] = [];

  /** Points the view at row `i` of `b`. */
  load(b: SpanBatch, i: number): this {
    const a = this.a;
    const set = this.set;
    for (let k = 0; k < set.length; k++) a[set[k]!] = undefined;
    set.length = 0;
    const { keyIndex, values } = b;
    for (let j = b.attrStart[i]!, e = b.attrStart[i + 1]!; j < e; j++) {
      const idx = keyIndex[j]!;
      if (idx < 0) continue;
      a[idx] = values[j]!;
      set.push(idx);
    }
    this.traceId = b.traceId[i]!;
    this.spanId = b.spanId[i]!;
    this.parentSpanId = b.parentSpanId[i]!;
    this.name = b.name[i]!;
    this.startMs = b.startMs[i]!;
    this.endMs = b.endMs[i]!;
    this.service = b.service[i]!;
    return this;
  }

  /** A view of one record (tests and tools that record spans one by one). */
  static of(span: SpanRecord): SpanView {
    return new SpanView().load(SpanBatch.of([span]), 0);
  }
}
