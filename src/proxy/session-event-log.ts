import { parseEventId } from './building-blocks.js';
import { hashHi, idHash } from './id-hash.js';

/** Where an event's sequence came from (`forkwatch.sse.event.seq.source`). */
export type SeqSource = 'server' | 'counter' | 'observed';

/** An event's place in its session's log. */
export interface EventSequence {
  /** Sequence: parsed from the id when it carries one, else the order the proxy first saw it in. */
  readonly seq: number;
  /** Where `seq` came from. */
  readonly source: SeqSource;
}

/** What the proxy remembers of one event it forwarded. */
export interface LoggedEvent extends EventSequence {
  /** The payload's fingerprint (payload-print.ts), to tell the same id sent with another payload. */
  print: number;
}

const SOURCES: readonly SeqSource[] = ['server', 'counter', 'observed'];
const OBSERVED = 2;
/** Places a log takes at its first id; it doubles up to its bound as ids come (most sessions send few). */
const INITIAL_PLACES = 16;
/**
 * What a log without ids holds: shared, never written (the first id grows the log). A log's
 * arrays cost ~1.8 KB even empty, and many sessions never send an id.
 */
const NO_I32 = new Int32Array(0);
const NO_F64 = new Float64Array(0);
const NO_U8 = new Uint8Array(0);
/** An index with nothing in it: every lookup stops at its first entry. */
const NO_INDEX = new Int32Array(2);

/**
 * The event ids one incarnation of a session sent through the proxy, bounded: past `max` the
 * oldest are forgotten (then "not seen" means "unknown", as `EventIdTracker` says).
 *
 * Nothing here is a string or an object per id: an id is known by its 64-bit hash (id-hash.ts),
 * and what is known of it sits in typed arrays, its place in arrival order, found through an
 * open-addressing index. A log of strings in a Map kept a young copy of every id in an old
 * structure, the scavenger's work on every event (the copy promoted, then collected with the
 * old generation), and hashed and rehashed it in the Map: measured as deployed, that was the
 * largest share of the sidecar's CPU per event (bench/RESULTS.md, `npm run bench -- sidecar`).
 * Two different ids share a hash with probability 2^-64 (docs/proxy.md).
 */
export class SessionEventLog implements EventSequence {
  /** Ids kept at most (at least one). */
  private readonly max: number;
  private lo: Int32Array;
  private hi: Int32Array;
  private seqs: Float64Array;
  private prints: Float64Array;
  /** Index in SOURCES. */
  private sources: Uint8Array;
  /** Places in use (< max: the next id takes place `count`; = max: it takes `next`, the oldest). */
  private count = 0;
  private next = 0;
  /** Open addressing, linear probing: place + 1, 0 for empty; twice the places or more. */
  private index: Int32Array;
  private mask: number;
  private observed = 0;
  /** Ids forgotten to stay within the bound. */
  evicted = 0;
  /** Highest id-carried sequence seen (`server` or `counter` source), 0 when none. */
  maxParsedSeq = 0;
  /** The sequence of the event the last {@link add} named (the earlier record's when it was known). */
  seq = 0;
  /** Where {@link seq} came from. */
  source: SeqSource = 'observed';

  constructor(max: number) {
    this.max = Math.max(1, Math.ceil(max));
    this.lo = this.hi = NO_I32;
    this.seqs = this.prints = NO_F64;
    this.sources = NO_U8;
    this.index = NO_INDEX;
    this.mask = NO_INDEX.length - 1;
  }

  get size(): number {
    return this.count;
  }

  get(id: string): LoggedEvent | undefined {
    const at = this.find(idHash(id), hashHi());
    return at < 0 ? undefined : { seq: this.seqs[at]!, source: SOURCES[this.sources[at]!]!, print: this.prints[at]! };
  }

  /**
   * Records `id` once; true when it was known already (a replay: the earlier record stands).
   * Either way {@link seq} and {@link source} then describe the event.
   */
  add(id: string, print: number): boolean {
    const lo = idHash(id);
    return this.addHashed(id, lo, hashHi(), print);
  }

  /** {@link add} of an id whose hash (id-hash.ts idHash, both halves) the caller took already. */
  addHashed(id: string, lo: number, hi: number, print: number): boolean {
    const known = this.find(lo, hi);
    if (known >= 0) {
      this.seq = this.seqs[known]!;
      this.source = SOURCES[this.sources[known]!]!;
      return true;
    }
    const parsed = parseEventId(id);
    let seq: number;
    let source: number;
    if (parsed.seq !== undefined) {
      seq = parsed.seq;
      source = parsed.source === 'server' ? 0 : 1;
      if (seq > this.maxParsedSeq) this.maxParsedSeq = seq;
    } else {
      seq = ++this.observed;
      source = OBSERVED;
    }
    let at: number;
    if (this.count < this.max) {
      if (this.count === this.lo.length) this.grow();
      at = this.count++;
    } else {
      at = this.next;
      this.unindex(at);
      this.evicted++;
      this.next = at + 1 === this.max ? 0 : at + 1;
    }
    this.lo[at] = lo;
    this.hi[at] = hi;
    this.seqs[at] = seq;
    this.prints[at] = print;
    this.sources[at] = source;
    let i = lo & this.mask;
    while (this.index[i] !== 0) i = (i + 1) & this.mask;
    this.index[i] = at + 1;
    this.seq = seq;
    this.source = SOURCES[source]!;
    return false;
  }

  /** true: forwarded in this incarnation; false: certainly not; undefined: can't tell (ids forgotten). */
  knows(id: string): boolean | undefined {
    if (this.find(idHash(id), hashHi()) >= 0) return true;
    return this.evicted === 0 ? false : undefined;
  }

  /** The place of the id hashed (lo, hi), -1 when not kept. */
  private find(lo: number, hi: number): number {
    const index = this.index;
    const mask = this.mask;
    for (let i = lo & mask; ; i = (i + 1) & mask) {
      const e = index[i]!;
      if (e === 0) return -1;
      if (this.lo[e - 1] === lo && this.hi[e - 1] === hi) return e - 1;
    }
  }

  /** Takes place `at` out of the index, shifting back the entries its removal would strand. */
  private unindex(at: number): void {
    const index = this.index;
    const mask = this.mask;
    let i = this.lo[at]! & mask;
    while (index[i] !== at + 1) i = (i + 1) & mask;
    index[i] = 0;
    for (let j = (i + 1) & mask; index[j] !== 0; j = (j + 1) & mask) {
      const home = this.lo[index[j]! - 1]! & mask;
      // Entry j stays where it is when its home lies cyclically in (i, j]: the hole does not cut its probe.
      if (i <= j ? i < home && home <= j : i < home || home <= j) continue;
      index[i] = index[j]!;
      index[j] = 0;
      i = j;
    }
  }

  /** Doubles the places (up to the bound) and rebuilds the index; only before the log is full. */
  private grow(): void {
    const places = Math.min(this.max, Math.max(INITIAL_PLACES, this.lo.length * 2));
    this.lo = copy(new Int32Array(places), this.lo);
    this.hi = copy(new Int32Array(places), this.hi);
    this.seqs = copy(new Float64Array(places), this.seqs);
    this.prints = copy(new Float64Array(places), this.prints);
    this.sources = copy(new Uint8Array(places), this.sources);
    this.index = new Int32Array(indexSize(places));
    this.mask = this.index.length - 1;
    for (let at = 0; at < this.count; at++) {
      let i = this.lo[at]! & this.mask;
      while (this.index[i] !== 0) i = (i + 1) & this.mask;
      this.index[i] = at + 1;
    }
  }
}

/** The smallest power of two at least twice `places`: the index stays at most half full. */
function indexSize(places: number): number {
  let n = 2;
  while (n < places * 2) n *= 2;
  return n;
}

function copy<T extends Int32Array | Float64Array | Uint8Array>(to: T, from: T): T {
  to.set(from as never);
  return to;
}
