import { parseEventId } from './building-blocks.js';

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
 */
export class SessionEventLog {
  private readonly ids = new Map<string, LoggedEvent>();
  private observed = 0;
  /** Ids forgotten to stay within the bound. */
  evicted = 0;
  /** Highest id-carried sequence seen (`server` or `counter` source), 0 when none. */
  maxParsedSeq = 0;

  constructor(private readonly max: number) {}

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
    if (this.ids.size >= this.max) {
      const oldest = this.ids.keys().next();
      if (!oldest.done) {
        this.ids.delete(oldest.value);
        this.evicted++;
      }
    }
    this.ids.set(id, event);
    return { event, replayed: false };
  }

  /** true: forwarded in this incarnation; false: certainly not; undefined: can't tell (ids forgotten). */
  knows(id: string): boolean | undefined {
    if (this.ids.has(id)) return true;
    return this.evicted === 0 ? false : undefined;
  }
}
