import { detach, parseEventId } from './building-blocks.js';

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

/**
 * The event ids one incarnation of a session sent through the proxy, bounded: past `max` the
 * oldest are forgotten (then "not seen" means "unknown", as `EventIdTracker` says).
 *
 * The order of arrival is kept in a ring of the ids beside the map: the oldest was found by
 * `ids.keys().next()`, which walks over every entry deleted since the map last rehashed (V8's
 * ordered hash tables leave holes at the front), up to `max` of them per event once the log is
 * full. Ids are kept detached from the SSE frame they were cut from: a view would keep the whole
 * frame alive for as long as the id is remembered.
 *
 * What is known of each id sits in number arrays beside the ring, the map giving its place: an
 * object per id outlived the young generation (the log keeps `max` of them), so every event cost
 * a copy or two in the scavenger and a promotion. `add` returns nothing to allocate either; read
 * {@link id}, {@link seq} and {@link source} after it (`npm run bench -- proxy-events`).
 */
export class SessionEventLog implements EventSequence {
  /** Id -> its place in the ring. */
  private readonly ids = new Map<string, number>();
  /** Ids in arrival order: `order[next]` is the oldest once the ring is full. */
  private readonly order: string[] = [];
  private readonly seqs: number[] = [];
  private readonly prints: number[] = [];
  /** Index in SOURCES. */
  private readonly sources: number[] = [];
  private next = 0;
  private observed = 0;
  /** Ids forgotten to stay within the bound. */
  evicted = 0;
  /** Highest id-carried sequence seen (`server` or `counter` source), 0 when none. */
  maxParsedSeq = 0;
  /** The sequence of the event the last {@link add} named (the earlier record's when it was known). */
  seq = 0;
  /** Where {@link seq} came from. */
  source: SeqSource = 'observed';
  /** The id the last {@link add} named, detached from its frame (what a record may keep). */
  id = '';

  /** Ids kept at most (at least one, as the map-only log kept). */
  private readonly max: number;

  constructor(max: number) {
    this.max = Math.max(1, Math.ceil(max));
  }

  get(id: string): LoggedEvent | undefined {
    const at = this.ids.get(id);
    return at === undefined ? undefined : { seq: this.seqs[at]!, source: SOURCES[this.sources[at]!]!, print: this.prints[at]! };
  }

  get size(): number {
    return this.ids.size;
  }

  /**
   * Records `id` once; true when it was known already (a replay: the earlier record stands).
   * Either way {@link id}, {@link seq} and {@link source} then describe the event.
   */
  add(id: string, print: number): boolean {
    // Detached first: the copy's hash, computed for the lookup, serves the insert too.
    const own = detach(id);
    const known = this.ids.get(own);
    if (known !== undefined) {
      this.id = own;
      this.seq = this.seqs[known]!;
      this.source = SOURCES[this.sources[known]!]!;
      return true;
    }
    const parsed = parseEventId(own);
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
    if (this.order.length < this.max) {
      at = this.order.length;
      this.order.push(own);
      this.seqs.push(seq);
      this.prints.push(print);
      this.sources.push(source);
    } else {
      at = this.next;
      this.ids.delete(this.order[at]!);
      this.evicted++;
      this.order[at] = own;
      this.seqs[at] = seq;
      this.prints[at] = print;
      this.sources[at] = source;
      this.next = at + 1 === this.max ? 0 : at + 1;
    }
    this.ids.set(own, at);
    this.id = own;
    this.seq = seq;
    this.source = SOURCES[source]!;
    return false;
  }

  /** true: forwarded in this incarnation; false: certainly not; undefined: can't tell (ids forgotten). */
  knows(id: string): boolean | undefined {
    if (this.ids.has(id)) return true;
    return this.evicted === 0 ? false : undefined;
  }
}
