import type { AttrValue } from '../model/span-record.js';
import * as semconv from '@forkwatch/instrumentation/semconv';
import { setAttribute } from './decode-accumulator.js';

/**
 * The attribute keys of the forkwatch schema (every `ATTR_*` of semconv): the only keys a shape's
 * generated code may name, so no byte of the wire ever becomes source text.
 */
export const SCHEMA_ATTRIBUTE_KEYS: readonly string[] = Object.entries(semconv)
  .filter(([name, v]) => name.startsWith('ATTR_') && typeof v === 'string')
  .map(([, v]) => v as string);

const INDEX = new Map(SCHEMA_ATTRIBUTE_KEYS.map((k, i) => [k, i]));
const SIDE = SCHEMA_ATTRIBUTE_KEYS.indexOf(semconv.ATTR_SIDE);

/** The index of `key` in {@link SCHEMA_ATTRIBUTE_KEYS}, or -1. */
export function schemaKeyIndex(key: string): number {
  return INDEX.get(key) ?? -1;
}

type Factory = new (v: readonly AttrValue[]) => Record<string, AttrValue>;

/** Shapes (key sequences) a table tracks at most: the trie's nodes, each one key deeper than its parent. */
const MAX_NODES = 1024;
/** Spans of one shape before it gets its own factory: a shape seen once or twice is not worth compiling. */
const FACTORY_AFTER = 8;
const K = SCHEMA_ATTRIBUTE_KEYS.length;
const NONE = 0;
/** A node whose factory could not be made (code generation disallowed): always the generic path. */
const NO_FACTORY = null;

/**
 * Builds each span's attribute record in one step once its keys are known. A forkwatch span's
 * keys come in one of a few sequences (one per span kind and side), always schema keys; adding
 * them one by one to `{}` cost a megamorphic keyed store with a map transition per attribute
 * (about a fifth of the protobuf decoder's instructions) and left most properties out of object.
 * Here each sequence seen often gets a function whose object literal names its keys in order,
 * so the record is allocated whole with in-object fields; any other span (a key outside the
 * schema, a key twice, too many shapes) is built as before, property by property. Either way the
 * record has the same keys in the same order with the same values.
 *
 * Use: {@link begin}, {@link add} per attribute in wire order, then {@link build}.
 */
export class AttributeShapes {
  /** Child of node n for key index k at n * K + k; NONE when absent. Node 0 is the empty sequence. */
  private readonly next = new Int32Array(MAX_NODES * K);
  private readonly parent = new Int32Array(MAX_NODES);
  private readonly keyOf = new Int32Array(MAX_NODES);
  private readonly seen = new Uint16Array(MAX_NODES);
  private readonly factories: Array<Factory | typeof NO_FACTORY | undefined> = [undefined];
  private nodes = 1;
  private readonly keys: string[] = [];
  private readonly values: AttrValue[] = [];
  private n = 0;
  /** The current span's node; -1 once it left the schema (generic path). */
  private node = 0;
  /** Key indexes already in the current span (bit k % 32 of word k >> 5). */
  private readonly present = new Int32Array((K + 31) >>> 5);
  /**
   * The current span's `forkwatch.side` as its record will hold it (the last one added), for the
   * decoder's check: read back from the record, it was a megamorphic keyed load per span.
   */
  side: AttrValue | undefined = undefined;

  begin(): void {
    this.n = 0;
    this.node = 0;
    this.side = undefined;
    const p = this.present;
    for (let i = 0; i < p.length; i++) p[i] = 0;
  }

  /** One attribute in wire order; `index` is its key's {@link schemaKeyIndex} (-1 outside the schema). */
  add(key: string, index: number, value: AttrValue): void {
    this.keys[this.n] = key;
    this.values[this.n] = value;
    this.n++;
    if (index === SIDE) this.side = value;
    const at = this.node;
    if (at < 0) return;
    if (index < 0) {
      this.node = -1;
      return;
    }
    const word = index >>> 5;
    const bit = 1 << (index & 31);
    if ((this.present[word]! & bit) !== 0) {
      // A repeated key keeps its first place and takes the last value: the generic path says so.
      this.node = -1;
      return;
    }
    this.present[word]! |= bit;
    const slot = at * K + index;
    let child = this.next[slot]!;
    if (child === NONE) {
      if (this.nodes >= MAX_NODES) {
        this.node = -1;
        return;
      }
      child = this.nodes++;
      this.next[slot] = child;
      this.parent[child] = at;
      this.keyOf[child] = index;
      this.factories.push(undefined);
    }
    this.node = child;
  }

  /** The record of the attributes added since {@link begin}. */
  build(): Record<string, AttrValue> {
    const node = this.node;
    if (node > 0) {
      let f = this.factories[node];
      if (f === undefined && ++this.seen[node]! >= FACTORY_AFTER) f = this.factories[node] = this.compile(node);
      if (f) return new f(this.values);
    }
    const out: Record<string, AttrValue> = {};
    for (let i = 0; i < this.n; i++) setAttribute(out, this.keys[i]!, this.values[i]!);
    return out;
  }

  private compile(node: number): Factory | typeof NO_FACTORY {
    const seq: string[] = [];
    for (let x = node; x > 0; x = this.parent[x]!) seq.push(SCHEMA_ATTRIBUTE_KEYS[this.keyOf[x]!]!);
    seq.reverse();
    try {
      // Only schema keys (constants of this package) reach the source, quoted by JSON.stringify.
      // A constructor, not a literal: a literal's allocation site puts a memento after every
      // record for the scavenger to visit. Its instances are plain objects (Object.prototype).
      const f = new Function('v', seq.map((k, i) => `this[${JSON.stringify(k)}] = v[${i}];`).join('\n')) as Factory;
      f.prototype = Object.prototype;
      return f;
    } catch {
      return NO_FACTORY;
    }
  }
}
