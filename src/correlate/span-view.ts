import { SCHEMA_KEY_COUNT } from '../model/schema-keys.js';
import { SpanBatch } from '../model/span-batch.js';
import type { AttrValue, SpanRecord } from '../model/span-record.js';

/**
 * One row of a {@link SpanBatch} as the engine reads it, reused from row to row: the span's fields,
 * and {@link get} for its schema attributes by schema index (`schemaKeyIndex`; undefined when
 * absent, the last value when a key came twice, as in a record). Every read is of one object
 * shape and two arrays, where reading each span's own attribute record went through V8's
 * megamorphic keyed load. The view holds positions in the batch's values, not the values: an
 * old-generation array written with each row's young values cost a write barrier per value and
 * remembered-set work at every scavenge.
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
  private values: readonly AttrValue[] = [];
  /** Each schema key's entry in `values` for the current row, -1 when absent. */
  private readonly pos = new Int32Array(SCHEMA_KEY_COUNT).fill(-1);
  /** Keys the current row set: the first `setCount`. */
  private readonly set = new Int32Array(SCHEMA_KEY_COUNT);
  private setCount = 0;

  /** The current row's value of the schema key at `index`, or undefined. */
  get(index: number): AttrValue | undefined {
    const p = this.pos[index]!;
    return p < 0 ? undefined : this.values[p];
  }

  /** Points the view at row `i` of `b`. */
  load(b: SpanBatch, i: number): this {
    const pos = this.pos;
    const set = this.set;
    for (let k = 0; k < this.setCount; k++) pos[set[k]!] = -1;
    let n = 0;
    const keyCode = b.keyCode;
    for (let j = b.attrStart[i]!, e = b.attrStart[i + 1]!; j < e; j++) {
      const idx = keyCode[j]!;
      if (idx < 0) continue;
      // A key given twice takes one place (the last value, as in a record): set stays within SCHEMA_KEY_COUNT.
      if (pos[idx]! < 0) set[n++] = idx;
      pos[idx] = j;
    }
    this.setCount = n;
    this.values = b.values;
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
