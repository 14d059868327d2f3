import { detach } from './own-string.js';
import { sha256Bytes } from './session-key.js';

/** Default of `maxBufferedEventsPerSession`: recent events a session keeps for a possible moment. */
export const DEFAULT_MAX_BUFFERED_EVENTS_PER_SESSION = 256;
/** Default of `maxBufferedEvents`: event slots kept across all sessions of one instrumentation. */
export const DEFAULT_MAX_BUFFERED_EVENTS = 65_536;
/**
 * Default of `maxBufferedPayloadChars`: payload text kept across all sessions of one
 * instrumentation, undigested, until a moment needs it or its slot is reused (chars, UTF-16 code
 * units). Past it an event is digested and read as it passes and keeps no text.
 */
export const DEFAULT_MAX_BUFFERED_PAYLOAD_CHARS = 8 * 1024 * 1024;

/**
 * One recorded SSE event: what `forkwatch.sse.event` would carry, every string detached from the
 * frame it was cut from. Its payload is either already digested and read (`text` undefined) or
 * kept as `text`, a copy of its own, to be digested and read only if a moment emits the slot:
 * most slots are reused unread, and the digest and the scan were most of the per-event work.
 * Slots are reused once a ring wraps: after a ring's first `maxBufferedEventsPerSession` events,
 * recording an event allocates nothing here. Every field is present from the start (one hidden
 * class for every slot).
 */
export class EventSlot {
  id = '';
  /** Sequence known when it was recorded (counter ids, guarded ids, or counted in send order). */
  seq: number | undefined = undefined;
  seqSource: string | undefined = undefined;
  streamId: string | undefined = undefined;
  /** Server: sent before in this incarnation. Client: seen before on this session id. */
  flag: boolean | undefined = undefined;
  /** The payload digest (first 64 bits of SHA-256, see {@link digestHex}) as two 32-bit halves. */
  digestHi = 0;
  digestLo = 0;
  bytes = 0;
  kind: string | undefined = undefined;
  rpcId: string | undefined = undefined;
  method: string | undefined = undefined;
  token: string | undefined = undefined;
  /** Epoch ms it was sent (server) or received (client). */
  at = 0;
  /** What the emitting side needs to parent the span (a request context); opaque here. */
  origin: unknown = undefined;
  /**
   * The payload, not yet digested and read (see {@link EventRingStore.keepText}); digest, bytes,
   * kind, rpcId, method and token are then unset. Undefined once read.
   */
  text: string | undefined = undefined;
}

/** `forkwatch.sse.payload.digest` of a slot: 16 lowercase hex chars. */
export function digestHex(slot: EventSlot): string {
  return hex8(slot.digestHi) + hex8(slot.digestLo);
}

/** SHA-256 of the empty string (e3b0c442 98fc1c14...): the priming event's digest. */
const EMPTY_HI = 0xe3b0c442;
const EMPTY_LO = 0x98fc1c14;

function hex8(n: number): string {
  return n.toString(16).padStart(8, '0');
}

/** Sets the slot's digest from a `forkwatch.sse.payload.digest` value (16 hex chars) computed elsewhere. */
export function setDigestHex(slot: EventSlot, hex: string): void {
  slot.digestHi = parseInt(hex.slice(0, 8), 16) || 0;
  slot.digestLo = parseInt(hex.slice(8, 16), 16) || 0;
}

/** Digests `data` into the slot (SHA-256, first 64 bits), with its UTF-8 length. */
export function digestInto(slot: EventSlot, data: string): void {
  if (data.length === 0) {
    slot.digestHi = EMPTY_HI;
    slot.digestLo = EMPTY_LO;
    slot.bytes = 0;
    return;
  }
  const raw = sha256Bytes(data);
  slot.digestHi = word(raw, 0);
  slot.digestLo = word(raw, 4);
  slot.bytes = Buffer.byteLength(data, 'utf8');
}

/** The big-endian 32-bit word at `i` of a byte string (one char per byte), unsigned. */
function word(raw: string, i: number): number {
  return ((raw.charCodeAt(i) << 24) | (raw.charCodeAt(i + 1) << 16) | (raw.charCodeAt(i + 2) << 8) | raw.charCodeAt(i + 3)) >>> 0;
}

/** The recent events of one session, oldest first, as a circular buffer of reused slots. */
export class EventRing {
  readonly slots: EventSlot[] = [];
  /** Index of the oldest slot once the ring has wrapped. */
  head = 0;
}

/**
 * The rings of one instrumentation, bounded per session and in total: a ring grows to
 * `perSession` slots and then overwrites its oldest; when all rings together hold `maxEvents`
 * slots, the ring that grew least recently is dropped whole to make room (an idle session's
 * history goes before a busy one's).
 */
export class EventRingStore {
  private slotsInUse = 0;
  private textChars = 0;
  /** Rings by the order in which they last grew (Map insertion order); the first goes first. */
  private readonly growth = new Map<EventRing, true>();

  /**
   * @param perSession slots per ring
   * @param maxEvents slots across all rings
   * @param maxTextChars payload chars kept undigested across all rings ({@link keepText}); 0 (the
   *   default) keeps none
   */
  constructor(
    readonly perSession: number,
    readonly maxEvents: number,
    readonly maxTextChars = 0,
  ) {}

  /** Slots held across all rings (always <= maxEvents). */
  get bufferedEvents(): number {
    return this.slotsInUse;
  }

  /** Payload chars held undigested across all rings (always <= maxTextChars). */
  get bufferedTextChars(): number {
    return this.textChars;
  }

  /**
   * Keeps `text` (a copy: never a view of the frame it was cut from) as the payload of `slot`,
   * which must belong to a ring of this store, when it fits in `maxTextChars`; false when it does
   * not (empty text is never kept): the caller digests and reads it now. `own`: `text` is a
   * string of its own (no frame behind it), kept as it is.
   */
  keepText(slot: EventSlot, text: string, own = false): boolean {
    if (slot.text !== undefined) this.takeText(slot);
    if (text.length === 0 || this.textChars + text.length > this.maxTextChars) return false;
    slot.text = own ? text : detach(text);
    this.textChars += text.length;
    return true;
  }

  /** The payload `slot` kept undigested, handed back and no longer counted; undefined when none. */
  takeText(slot: EventSlot): string | undefined {
    const text = slot.text;
    if (text !== undefined) {
      this.textChars -= text.length;
      slot.text = undefined;
    }
    return text;
  }

  /** The slot for a new event of `ring`; the caller sets every field (a reused slot holds its last event's). */
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
    // Reused unread: its payload is dropped without ever being digested.
    if (slot.text !== undefined) this.takeText(slot);
    return slot;
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
    if (this.textChars > 0) for (const slot of ring.slots) if (slot.text !== undefined) this.takeText(slot);
    ring.slots.length = 0;
    ring.head = 0;
  }

  private evictOldest(except: EventRing): void {
    for (const ring of this.growth.keys()) {
      if (ring === except) continue;
      this.release(ring);
      return;
    }
  }
}
