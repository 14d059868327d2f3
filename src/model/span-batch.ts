import { ATTR_SIDE } from '@forkwatch/instrumentation/semconv';
import { SCHEMA_ATTRIBUTE_KEYS, schemaKeyIndex } from './schema-keys.js';
import type { AttrValue, SpanRecord } from './span-record.js';

const SIDE = schemaKeyIndex(ATTR_SIDE);

/**
 * Forkwatch spans as the correlation engine takes them: one row per span, in columns, so that a
 * request's spans cost a few arrays instead of two objects each (a span record and its attribute
 * record). Attributes are kept in wire order as a key code and a value: the key's index in the
 * schema (SCHEMA_ATTRIBUTE_KEYS), or for a key outside it -1 - its place in {@link extraKeys}.
 * The engine reads a row's schema attributes by index; the rows can be turned back into
 * {@link SpanRecord}s with the same keys in the same order (the decoders' `spans`).
 *
 * Made by a {@link SpanBatchWriter} (or {@link of}); read-only. Every column has exactly
 * {@link length} entries, `attrStart` one more, `keyCode` and `values` `attrStart[length]`.
 */
export class SpanBatch {
  constructor(
    /** Rows. */
    readonly length: number,
    readonly traceId: readonly string[],
    readonly spanId: readonly string[],
    readonly parentSpanId: readonly string[],
    readonly name: readonly string[],
    /** Start time, Unix epoch milliseconds. */
    readonly startMs: readonly number[],
    /** End time, Unix epoch milliseconds. */
    readonly endMs: readonly number[],
    readonly service: readonly string[],
    /** Each row's `forkwatch.side` attribute as it came (the decoders accept only `client` and `server`). */
    readonly side: ReadonlyArray<AttrValue | undefined>,
    /** Row i's attributes are entries `[attrStart[i], attrStart[i + 1])` of {@link keyCode} and {@link values}. */
    readonly attrStart: readonly number[],
    readonly keyCode: readonly number[],
    readonly values: readonly AttrValue[],
    /** Keys outside the schema, in the order written. */
    readonly extraKeys: readonly string[],
  ) {}

  /** The records' rows (attributes in their own key order); what is not a record (null, no attributes) is left out. */
  static of(spans: readonly SpanRecord[]): SpanBatch {
    const w = new SpanBatchWriter(spans.length, spans.length * 16);
    for (const s of spans) {
      try {
        const a = s.attributes;
        for (const k of Object.keys(a)) w.addAttribute(k, schemaKeyIndex(k), a[k]!);
        w.endRow(s.traceId, s.spanId, s.parentSpanId, s.name, s.startMs, s.endMs, s.service);
      } catch {
        // The engine ignores what it cannot use; a malformed record must not stop the others.
        w.dropAttributes();
      }
    }
    return w.take();
  }

  /** The key of attribute entry `j`. */
  keyAt(j: number): string {
    const c = this.keyCode[j]!;
    return c >= 0 ? SCHEMA_ATTRIBUTE_KEYS[c]! : this.extraKeys[-1 - c]!;
  }

  /** Rows `[from, to)` as a batch of their own. */
  slice(from: number, to: number): SpanBatch {
    to = Math.min(to, this.length);
    const w = new SpanBatchWriter(Math.max(0, to - from), this.attrStart[to]! - this.attrStart[Math.max(0, Math.min(from, to))]!);
    for (let i = Math.max(0, from); i < to; i++) {
      for (let j = this.attrStart[i]!, e = this.attrStart[i + 1]!; j < e; j++) {
        const c = this.keyCode[j]!;
        w.addAttribute(this.keyAt(j), c >= 0 ? c : -1, this.values[j]!);
      }
      w.endRow(this.traceId[i]!, this.spanId[i]!, this.parentSpanId[i]!, this.name[i]!, this.startMs[i]!, this.endMs[i]!, this.service[i]!);
    }
    return w.take();
  }
}

/**
 * Writes the rows of {@link SpanBatch}es: {@link addAttribute} per attribute in wire order, then
 * {@link endRow} (or {@link dropAttributes} for a rejected span); {@link take} hands the rows
 * written so far as a batch and starts a new one. Columns are written by index into arrays made
 * for each batch with room for a quarter more rows and attributes than the previous batch had: a batch is
 * then allocated about once at its size (arrays grown value by value allocated about three times
 * their final size), and it is young, so writing it costs no write barrier's slow path (scratch
 * columns kept from batch to batch are old, and were).
 */
export class SpanBatchWriter {
  private rows = 0;
  private attrs = 0;
  private rowRoom: number;
  private attrRoom: number;
  private traceId: string[] = [];
  private spanId: string[] = [];
  private parentSpanId: string[] = [];
  private name: string[] = [];
  private startMs: number[] = [];
  private endMs: number[] = [];
  private service: string[] = [];
  private side: Array<AttrValue | undefined> = [];
  private attrStart: number[] = [0];
  private keyCode: number[] = [];
  private values: AttrValue[] = [];
  private extraKeys: string[] = [];

  /** @param rows, attrs room of the first batch (rows, attributes); later ones get the previous one's. */
  constructor(rows = 64, attrs = 1024) {
    this.rowRoom = rows;
    this.attrRoom = attrs;
    this.fresh();
  }

  /** Rows written since the last {@link take}. */
  get length(): number {
    return this.rows;
  }

  /** Forgets every row written since the last {@link take} (a request that failed to decode). */
  reset(): void {
    if (this.rows !== 0 || this.attrs !== 0) this.fresh();
  }

  /** New columns (the last ones belong to a batch, or to nothing worth keeping). */
  private fresh(): void {
    this.rows = 0;
    this.attrs = 0;
    const r = this.rowRoom;
    this.traceId = new Array<string>(r);
    this.spanId = new Array<string>(r);
    this.parentSpanId = new Array<string>(r);
    this.name = new Array<string>(r);
    this.startMs = new Array<number>(r);
    this.endMs = new Array<number>(r);
    this.service = new Array<string>(r);
    this.side = new Array<AttrValue | undefined>(r);
    this.attrStart = new Array<number>(r + 1);
    this.attrStart[0] = 0;
    this.keyCode = new Array<number>(this.attrRoom);
    this.values = new Array<AttrValue>(this.attrRoom);
    this.extraKeys = [];
  }

  /** One attribute of the row being written, in wire order; `index` is its key's schema index (-1 outside it). */
  addAttribute(key: string, index: number, value: AttrValue): void {
    const n = this.attrs;
    if (index < 0) {
      index = -1 - this.extraKeys.length;
      this.extraKeys.push(key);
    }
    this.keyCode[n] = index;
    this.values[n] = value;
    this.attrs = n + 1;
  }

  /** `forkwatch.side` of the row being written (the last value given, as in a record): undefined when absent. */
  pendingSide(): AttrValue | undefined {
    const code = this.keyCode;
    for (let j = this.attrs - 1, from = this.attrStart[this.rows]!; j >= from; j--) if (code[j] === SIDE) return this.values[j];
    return undefined;
  }

  /** Forgets the attributes added since the last row ended (a rejected span). */
  dropAttributes(): void {
    const from = this.attrStart[this.rows]!;
    let extras = this.extraKeys.length;
    for (let j = from; j < this.attrs; j++) if (this.keyCode[j]! < 0) extras--;
    this.extraKeys.length = extras;
    this.attrs = from;
  }

  /** Ends the row whose attributes were added since the previous one. */
  endRow(traceId: string, spanId: string, parentSpanId: string, name: string, startMs: number, endMs: number, service: string): void {
    const i = this.rows;
    this.side[i] = this.pendingSide();
    this.traceId[i] = traceId;
    this.spanId[i] = spanId;
    this.parentSpanId[i] = parentSpanId;
    this.name[i] = name;
    this.startMs[i] = startMs;
    this.endMs[i] = endMs;
    this.service[i] = service;
    this.attrStart[i + 1] = this.attrs;
    this.rows = i + 1;
  }

  /** The rows written since the last call, as a batch of their own; the writer starts a new one. */
  take(): SpanBatch {
    const n = this.rows;
    const m = this.attrs;
    // Cut to size in place (the arrays were made with room to spare).
    const cut = <T>(a: T[], len: number): T[] => {
      a.length = len;
      return a;
    };
    const b = new SpanBatch(
      n,
      cut(this.traceId, n),
      cut(this.spanId, n),
      cut(this.parentSpanId, n),
      cut(this.name, n),
      cut(this.startMs, n),
      cut(this.endMs, n),
      cut(this.service, n),
      cut(this.side, n),
      cut(this.attrStart, n + 1),
      cut(this.keyCode, m),
      cut(this.values, m),
      this.extraKeys,
    );
    // A quarter to spare: the next batch growing its arrays would allocate them again.
    this.rowRoom = Math.max(16, n + (n >>> 2));
    this.attrRoom = Math.max(64, m + (m >>> 2));
    this.fresh();
    return b;
  }
}
