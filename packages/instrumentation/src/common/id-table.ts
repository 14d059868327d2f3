/**
 * A 53-bit hash of a string (two 32-bit multiplicative hashes of its UTF-16 code units), never 0:
 * what an {@link IdTable} is keyed by. Two ids that differ collide with probability ~2^-53 per
 * comparison; a 4,096-entry table answers "seen" falsely about once in 2^41 lookups.
 */
export function hashId(s: string): number {
  let a = 0x811c9dc5 ^ s.length;
  let b = 0x9747b28c;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 13;
  }
  a ^= a >>> 16;
  a = Math.imul(a, 0x85ebca6b);
  a ^= a >>> 13;
  b ^= b >>> 15;
  b = Math.imul(b, 0xc2b2ae35);
  b ^= b >>> 16;
  const h = (a >>> 0) * 2097152 + (b >>> 11);
  return h === 0 ? 1 : h;
}

/** First capacity of a table's slots; it doubles as entries come, up to twice `max`. */
const MIN_CAPACITY = 16;

/**
 * A bounded set of id hashes ({@link hashId}) with a number per id, in typed arrays: no string
 * and no object is kept per id, so remembering thousands of event ids costs the host's garbage
 * collector nothing. Open addressing with linear probing; past `max` ids the oldest is forgotten
 * (`evicted` counts them). Storage grows with use, so an idle table costs a few hundred bytes.
 */
export class IdTable {
  /** Hash per slot, 0 = empty. */
  private keys: Float64Array;
  private values: Float64Array;
  /** Hashes in insertion order (a ring of up to `max`), oldest at `head`. */
  private order: Float64Array;
  private head = 0;
  private count = 0;
  /** Ids forgotten to stay within `max`. */
  evicted = 0;

  constructor(readonly max: number) {
    const cap = MIN_CAPACITY;
    this.keys = new Float64Array(cap);
    this.values = new Float64Array(cap);
    this.order = new Float64Array(Math.max(1, Math.min(max, cap)));
  }

  get size(): number {
    return this.count;
  }

  /** The number kept for `hash`, or undefined when it is not (or no longer) in the table. */
  get(hash: number): number | undefined {
    const keys = this.keys;
    const mask = keys.length - 1;
    for (let i = slotOf(hash, mask); ; i = (i + 1) & mask) {
      const k = keys[i]!;
      if (k === hash) return this.values[i];
      if (k === 0) return undefined;
    }
  }

  has(hash: number): boolean {
    return this.get(hash) !== undefined;
  }

  /** Keeps `value` for `hash` (replacing the number of an id already kept; its age stays). */
  set(hash: number, value: number): void {
    if (this.max <= 0) return;
    let keys = this.keys;
    let mask = keys.length - 1;
    for (let i = slotOf(hash, mask); ; i = (i + 1) & mask) {
      const k = keys[i]!;
      if (k === hash) {
        this.values[i] = value;
        return;
      }
      if (k === 0) break;
    }
    if (this.count >= this.max) {
      this.remove(this.order[this.head]!);
      this.head = this.head + 1 === this.order.length ? 0 : this.head + 1;
      this.evicted++;
    } else if (this.count === this.order.length) {
      this.growOrder();
    }
    // At most half full: probes stay short and there is always an empty slot.
    if ((this.count + 1) * 2 > keys.length) {
      this.rehash(keys.length * 2);
      keys = this.keys;
      mask = keys.length - 1;
    }
    let i = slotOf(hash, mask);
    while (keys[i] !== 0) i = (i + 1) & mask;
    keys[i] = hash;
    this.values[i] = value;
    const o = this.order;
    o[(this.head + this.count) % o.length] = hash;
    this.count++;
  }

  /** Deletes `hash` from the slots (not from `order`: only the oldest is ever removed). */
  private remove(hash: number): void {
    const keys = this.keys;
    const values = this.values;
    const mask = keys.length - 1;
    let i = slotOf(hash, mask);
    while (keys[i] !== hash) {
      if (keys[i] === 0) return;
      i = (i + 1) & mask;
    }
    // Backward-shift deletion: later entries of the probe run move into the gap.
    let gap = i;
    for (let j = (i + 1) & mask; keys[j] !== 0; j = (j + 1) & mask) {
      const home = slotOf(keys[j]!, mask);
      const between = gap <= j ? gap < home && home <= j : gap < home || home <= j;
      if (between) continue;
      keys[gap] = keys[j]!;
      values[gap] = values[j]!;
      gap = j;
    }
    keys[gap] = 0;
    values[gap] = 0;
    this.count--;
  }

  private rehash(cap: number): void {
    const oldKeys = this.keys;
    const oldValues = this.values;
    const keys = new Float64Array(cap);
    const values = new Float64Array(cap);
    const mask = cap - 1;
    for (let j = 0; j < oldKeys.length; j++) {
      const k = oldKeys[j]!;
      if (k === 0) continue;
      let i = slotOf(k, mask);
      while (keys[i] !== 0) i = (i + 1) & mask;
      keys[i] = k;
      values[i] = oldValues[j]!;
    }
    this.keys = keys;
    this.values = values;
  }

  /** The order ring is full but below `max`: unroll it into one twice as long. */
  private growOrder(): void {
    const o = this.order;
    const next = new Float64Array(Math.min(this.max, o.length * 2));
    for (let i = 0; i < this.count; i++) next[i] = o[(this.head + i) % o.length]!;
    this.order = next;
    this.head = 0;
  }
}

/** Home slot of a hash: its low 32 bits (ToInt32) mixed with its high ones. */
function slotOf(hash: number, mask: number): number {
  return ((hash | 0) ^ ((hash / 4294967296) | 0)) & mask;
}
