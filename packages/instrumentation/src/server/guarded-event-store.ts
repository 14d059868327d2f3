import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { formatEventId, parseEventId } from '../common/incarnation.js';
import type { EventLookup, GuardedEventStoreOptions } from './types.js';

/** Default of `maxEvents`: events kept per session log. */
export const DEFAULT_MAX_EVENTS_PER_SESSION = 1000;
/** Default of `maxBytes`: bytes (UTF-8 JSON) kept per session log, 1 MiB. */
export const DEFAULT_MAX_BYTES_PER_SESSION = 1024 * 1024;

interface StoredEvent {
  seq: number;
  streamId: string;
  message: JSONRPCMessage;
  bytes: number;
}

/**
 * The event log of ONE session incarnation (the SDK's `EventStore`). Ids are
 * `<incarnation>-<seq>`, seq from 1, so an id names the incarnation it belongs to and an id of
 * another incarnation can never match. Bounded: past `maxEvents` or `maxBytes` the oldest events
 * are evicted and the highest evicted seq is remembered, so a later resume before it is told
 * `event_evicted` instead of being replayed from the start.
 */
export class GuardedEventStore implements EventStore {
  readonly maxEvents: number;
  readonly maxBytes: number;
  /** Events in seq order; `events[head]` is the oldest kept. */
  private events: StoredEvent[] = [];
  private head = 0;
  private lastSeq = 0;
  private totalBytes = 0;
  /** Highest seq evicted (0: none). */
  private evictedThrough = 0;
  private cleared = false;

  constructor(
    readonly incarnation: string,
    options: GuardedEventStoreOptions = {},
  ) {
    this.maxEvents = options.maxEvents ?? DEFAULT_MAX_EVENTS_PER_SESSION;
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES_PER_SESSION;
  }

  /** Events held now. */
  get size(): number {
    return this.events.length - this.head;
  }

  /** Bytes held now. */
  get bytes(): number {
    return this.totalBytes;
  }

  /** Highest seq evicted by the bounds (0 when none). */
  get evictedThroughSeq(): number {
    return this.evictedThrough;
  }

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const seq = ++this.lastSeq;
    const id = formatEventId(this.incarnation, seq);
    // A cleared log belongs to an evicted session: hand out ids, keep nothing.
    if (this.cleared) {
      this.evictedThrough = seq;
      return id;
    }
    const bytes = Buffer.byteLength(JSON.stringify(message), 'utf8');
    this.events.push({ seq, streamId, message, bytes });
    this.totalBytes += bytes;
    while (this.size > 0 && (this.size > this.maxEvents || this.totalBytes > this.maxBytes)) this.evictOldest();
    return id;
  }

  /** Where `eventId` stands in this log. O(1). */
  lookup(eventId: string): EventLookup {
    const parsed = parseEventId(eventId);
    if (parsed.source !== 'server' || parsed.seq === undefined) return { found: false, reason: 'unknown_event' };
    if (parsed.incarnation !== this.incarnation) return { found: false, reason: 'other_incarnation' };
    const seq = parsed.seq;
    if (seq < 1 || seq > this.lastSeq) return { found: false, reason: 'unknown_event' };
    const ev = this.at(seq);
    if (!ev) return { found: false, reason: 'event_evicted' };
    return { found: true, seq, streamId: ev.streamId };
  }

  /** The stream `eventId` was stored on, when it is in the log. */
  streamIdOf(eventId: string): string | undefined {
    const l = this.lookup(eventId);
    return l.found ? l.streamId : undefined;
  }

  /**
   * Sends the events of the same stream stored after `lastEventId`, skipping priming events
   * (empty messages). Throws when the id is not in the log: the SDK then answers 500 rather than
   * replaying from the start.
   */
  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const l = this.lookup(lastEventId);
    if (!l.found) throw new Error(`Last-Event-ID not in session log (${l.reason})`);
    // Events stored while replaying are delivered live by the SDK; stop at today's end.
    const until = this.lastSeq;
    for (let seq = l.seq + 1; seq <= until; seq++) {
      const ev = this.at(seq);
      if (!ev) continue;
      if (ev.streamId !== l.streamId || isEmpty(ev.message)) continue;
      await send(formatEventId(this.incarnation, seq), ev.message);
    }
    return l.streamId;
  }

  /** Drops every event (the session is gone) and refuses to keep new ones; returns how many. */
  clear(): number {
    const n = this.size;
    this.evictedThrough = this.lastSeq;
    this.events = [];
    this.head = 0;
    this.totalBytes = 0;
    this.cleared = true;
    return n;
  }

  private at(seq: number): StoredEvent | undefined {
    if (seq <= this.evictedThrough) return undefined;
    const first = this.events[this.head];
    if (!first) return undefined;
    return this.events[this.head + (seq - first.seq)];
  }

  private evictOldest(): void {
    const ev = this.events[this.head];
    if (!ev) return;
    this.events[this.head] = undefined as unknown as StoredEvent;
    this.head++;
    this.totalBytes -= ev.bytes;
    this.evictedThrough = ev.seq;
    // Compact now and then so the array does not grow with the session's lifetime.
    if (this.head > 64 && this.head * 2 > this.events.length) {
      this.events = this.events.slice(this.head);
      this.head = 0;
    }
  }
}

function isEmpty(message: unknown): boolean {
  return !message || (typeof message === 'object' && Object.keys(message).length === 0);
}
