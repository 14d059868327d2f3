import { payloadDigest } from './session-key.js';

/** Default of `maxBufferedEventsPerSession`: recent events a session keeps for a possible moment. */
export const DEFAULT_MAX_BUFFERED_EVENTS_PER_SESSION = 256;
/** Default of `maxBufferedEvents`: event slots kept across all sessions of one instrumentation. */
export const DEFAULT_MAX_BUFFERED_EVENTS = 65_536;
/** Default of `maxBufferedPayloadChars`: payload text kept (by reference) for digests computed only if emitted. */
export const DEFAULT_MAX_BUFFERED_PAYLOAD_CHARS = 8 * 1024 * 1024;

/**
 * One recorded SSE event. Slots are reused once a ring wraps: after a ring's first
 * `maxBufferedEventsPerSession` events, recording an event allocates nothing. Every field is
 * present from the start (one hidden class for every slot).
 */
export class EventSlot {
  id = '';
  /** Sequence known when it was recorded (counter ids, guarded ids, or counted in send order). */
  seq: number | undefined = undefined;
  seqSource: string | undefined = undefined;
  streamId: string | undefined = undefined;
  /** Server: sent before in this incarnation. Client: seen before on this session id. */
  flag: boolean | undefined = undefined;
  /** The SSE data, kept by reference while the payload budget allows: parsed and digested only if emitted. */
  data: string | undefined = undefined;
  /** Digest and message fields, computed at once when `data` could not be kept. */
  digest: string | undefined = undefined;
  bytes = 0;
  kind: string | undefined = undefined;
  rpcId: string | undefined = undefined;
  method: string | undefined = undefined;
  token: string | undefined = undefined;
  /** Epoch ms it was sent (server) or received (client). */
  at = 0;
  /** What the emitting side needs to parent the span (a request context); opaque here. */
  origin: unknown = undefined;
}

/** The recent events of one session, oldest first, as a circular buffer of reused slots. */
export class EventRing {
  readonly slots: EventSlot[] = [];
  /** Index of the oldest slot once the ring has wrapped. */
  head = 0;
  /** Payload chars this ring holds against the store's budget. */
  chars = 0;
}

/**
 * The rings of one instrumentation, bounded per session and in total: a ring grows to
 * `perSession` slots and then overwrites its oldest; when all rings together hold `maxEvents`
 * slots, the ring that grew least recently is dropped whole to make room (an idle session's
 * history goes before a busy one's). Payload text is kept by reference only while the total stays
 * under `maxPayloadChars`; past it, events are digested when recorded instead.
 */
export class EventRingStore {
  private slotsInUse = 0;
  private charsInUse = 0;
  /** Rings by the order in which they last grew (Map insertion order); the first goes first. */
  private readonly growth = new Map<EventRing, true>();

  constructor(
    readonly perSession: number,
    readonly maxEvents: number,
    readonly maxPayloadChars: number,
  ) {}

  /** Slots held across all rings (always <= maxEvents). */
  get bufferedEvents(): number {
    return this.slotsInUse;
  }

  /** Payload chars held by reference across all rings (always <= maxPayloadChars). */
  get bufferedPayloadChars(): number {
    return this.charsInUse;
  }

  /** The slot for a new event of `ring`, reset except for the fields the caller fills. */
  next(ring: EventRing): EventSlot {
    const slots = ring.slots;
    if (slots.length < this.perSession) {
      if (this.slotsInUse >= this.maxEvents) this.evictOldest(ring);
      if (slots.length < this.perSession && this.slotsInUse < this.maxEvents) {
        const slot = new EventSlot();
        slots.push(slot);
        this.slotsInUse++;
        this.growth.delete(ring);
        this.growth.set(ring, true);
        return slot;
      }
      // Nothing else to evict (this ring alone fills the budget): overwrite its oldest.
    }
    const slot = slots[ring.head]!;
    ring.head = ring.head + 1 === slots.length ? 0 : ring.head + 1;
    this.forgetData(ring, slot);
    slot.digest = slot.kind = slot.rpcId = slot.method = slot.token = undefined;
    return slot;
  }

  /** Keeps `data` on the slot if the payload budget allows; else digests it now and returns false. */
  keepData(ring: EventRing, slot: EventSlot, data: string): boolean {
    if (this.charsInUse + data.length <= this.maxPayloadChars) {
      slot.data = data;
      ring.chars += data.length;
      this.charsInUse += data.length;
      return true;
    }
    slot.data = undefined;
    slot.digest = payloadDigest(data);
    slot.bytes = Buffer.byteLength(data, 'utf8');
    return false;
  }

  /** Visits the ring's events oldest first. */
  forEach(ring: EventRing, fn: (slot: EventSlot) => void): void {
    const slots = ring.slots;
    const n = slots.length;
    for (let i = 0; i < n; i++) fn(slots[(ring.head + i) % n]!);
  }

  /** Frees every slot of the ring (emitted, or its stream ended cleanly). */
  release(ring: EventRing): void {
    if (!this.growth.delete(ring) && ring.slots.length === 0) return;
    this.slotsInUse -= ring.slots.length;
    this.charsInUse -= ring.chars;
    ring.slots.length = 0;
    ring.head = 0;
    ring.chars = 0;
  }

  private forgetData(ring: EventRing, slot: EventSlot): void {
    const d = slot.data;
    if (d === undefined) return;
    ring.chars -= d.length;
    this.charsInUse -= d.length;
    slot.data = undefined;
  }

  private evictOldest(except: EventRing): void {
    for (const ring of this.growth.keys()) {
      if (ring === except) continue;
      this.release(ring);
      return;
    }
  }
}
