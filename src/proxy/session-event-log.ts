import { detach, parseEventId } from './building-blocks.js';

/** What the proxy remembers of one event it forwarded. */
export interface LoggedEvent {
  /** Sequence: parsed from the id when it carries one, else the order the proxy first saw it in. */
  seq: number;
  /** Where `seq` came from (`forkwatch.sse.event.seq.source`). */
  source: 'server' | 'counter' | 'observed';
  /** The payload's fingerprint (payload-print.ts), to tell the same id sent with another payload. */
  print: number;
}

/**
 * The event ids one incarnation of a session sent through the proxy, bounded: past `max` the
 * oldest are forgotten (then "not seen" means "unknown", as `EventIdTracker` says).
 *
 * The order of arrival is kept in a ring of the ids beside the map: the oldest was found by
 * `ids.keys().next()`, which walks over every entry deleted since the map last rehashed (V8's
 * ordered hash tables leave holes at the front), up to `max` of them per event once the log is
 * full: the largest self time of the proxy's per-event work (`npm run bench -- sidecar`, node
 * --cpu-prof). Ids are kept detached from the SSE frame they were cut from: a view would keep the
 * whole frame alive for as long as the id is remembered.
 */
export class SessionEventLog {
  private readonly ids = new Map<string, LoggedEvent>();
  /** Ids in arrival order: `order[next]` is the oldest once the ring is full. */
  private readonly order: string[] = [];
  private next = 0;
  private observed = 0;
  /** Ids forgotten to stay within the bound. */
  evicted = 0;
  /** Highest id-carried sequence seen (`server` or `counter` source), 0 when none. */
  maxParsedSeq = 0;

  /** Ids kept at most (at least one, as the map-only log kept). */
  private readonly max: number;

  constructor(max: number) {
    this.max = Math.max(1, Math.ceil(max));
  }

  get(id: string): LoggedEvent | undefined {
    return this.ids.get(id);
  }

  get size(): number {
    return this.ids.size;
  }

  /** Records `id` once; returns what was recorded (the earlier record when it was known). */
  add(id: string, print: number): { event: LoggedEvent; replayed: boolean } {
    const known = this.ids.get(id);
    if (known !== undefined) return { event: known, replayed: true };
    const parsed = parseEventId(id);
    const event: LoggedEvent =
      parsed.seq !== undefined ? { seq: parsed.seq, source: parsed.source!, print } : { seq: ++this.observed, source: 'observed', print };
    if (event.source !== 'observed' && event.seq > this.maxParsedSeq) this.maxParsedSeq = event.seq;
    const own = detach(id);
    if (this.order.length < this.max) this.order.push(own);
    else {
      this.ids.delete(this.order[this.next]!);
      this.evicted++;
      this.order[this.next] = own;
      this.next = this.next + 1 === this.max ? 0 : this.next + 1;
    }
    this.ids.set(own, event);
    return { event, replayed: false };
  }

  /** true: forwarded in this incarnation; false: certainly not; undefined: can't tell (ids forgotten). */
  knows(id: string): boolean | undefined {
    if (this.ids.has(id)) return true;
    return this.evicted === 0 ? false : undefined;
  }
}
