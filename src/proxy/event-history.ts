import { DEFAULT_MAX_BUFFERED_PAYLOAD_CHARS, digestInto, EventRing, EventRingStore, EventSlot, type JsonRpcInfo } from './building-blocks.js';
import { describeEvent, NO_MESSAGE } from './event-info.js';
import type { EventSequence } from './session-event-log.js';
import type { ProxySession } from './session-table.js';
import type { WireSpans } from './wire-spans.js';

/** The incarnation and protocol version an event passed in (what its span reports). */
export interface EventOrigin {
  readonly incarnation: string | undefined;
  readonly protocolVersion: string | undefined;
}

/** Fills the slot's message fields from what its data describes. */
export function setInfo(slot: EventSlot, info: JsonRpcInfo): void {
  slot.kind = info.kind;
  slot.rpcId = info.id;
  slot.method = info.method;
  slot.token = info.method === 'notifications/progress' ? info.progressToken : undefined;
}

/** What the proxy keeps of a session's recent events until a moment makes them matter. */
export interface SessionHistory {
  ring: EventRing;
  /** After a resume or a mint: events go out as they pass (docs/telemetry.md, "When event history is emitted"). */
  live: boolean;
}

/**
 * The proxy's side of "When event history is emitted" (docs/telemetry.md): each session's
 * id-bearing events wait in a bounded ring (the instrumentation's `EventRingStore`, its defaults)
 * and go out as `forkwatch.sse.event` spans, each with its own time and incarnation, only when a
 * moment happens on the session: a resume reaches it, a new life is minted other than by
 * `initialize`, an answer comes under another session id, or one of its requests' span is
 * emitted. With `requestSpanDelayMs: 0` nothing waits.
 */
export class EventHistory {
  private readonly store: EventRingStore;

  constructor(
    private readonly spans: WireSpans,
    limits: { perSession: number; maxEvents: number; maxTextChars?: number },
    private readonly immediate: boolean,
    /** Told of each event read whose data is not a JSON-RPC message (the proxy's `malformedSse`). */
    private readonly onUnreadable: () => void = () => undefined,
  ) {
    this.store = new EventRingStore(limits.perSession, limits.maxEvents, limits.maxTextChars ?? DEFAULT_MAX_BUFFERED_PAYLOAD_CHARS);
  }

  /** Events waiting across all sessions. */
  get buffered(): number {
    return this.store.bufferedEvents;
  }

  /**
   * Records one event the proxy forwarded (`s` undefined: a sessionless answer, emitted at once).
   * `info`: what its data describes when the exchange read it (an event that may answer a
   * request); undefined: not read, and read here only if its span is emitted (a moment, or now
   * when it cannot wait), as the instrumentation's rings read theirs;
   * `origin`: the incarnation and protocol version it passed in (one object per exchange);
   * `logged`: its place in the session's log (read now, not kept). A buffered record keeps `id`:
   * pass one detached from the SSE frame (own-string.ts `detach`); `own`: `data` is a string of
   * its own too (sse-scan.ts), kept without a copy.
   */
  record(
    s: ProxySession | undefined,
    sessionId: string | undefined,
    id: string,
    data: string,
    info: JsonRpcInfo | undefined,
    logged: EventSequence | undefined,
    replayed: boolean,
    origin: EventOrigin,
    at: number,
    own = false,
  ): void {
    const buffer = s !== undefined && !this.immediate && !s.history.live;
    const slot = buffer ? this.store.next(s.history.ring) : new EventSlot();
    slot.id = id;
    slot.seq = logged?.seq;
    slot.seqSource = logged?.source;
    slot.streamId = undefined;
    slot.flag = replayed;
    slot.at = at;
    slot.origin = origin;
    // Its digest (SHA-256) and, unless the exchange read it already, its description are taken
    // only if a moment emits the slot, while the store's text budget lasts (most slots are reused
    // unread), as the instrumentation's rings do. An unread slot's kind is undefined.
    if (info !== undefined) setInfo(slot, info);
    else slot.kind = undefined;
    if (buffer && this.store.keepText(slot, data, own)) return;
    this.read(slot, data);
    if (!buffer) this.spans.event(s, sessionId, slot);
  }

  /** A moment on `s`: its waiting events out, oldest first; `live` keeps later ones going out at once. */
  moment(s: ProxySession, live: boolean): void {
    const ring = s.history.ring;
    if (ring.slots.length > 0) {
      this.store.forEach(ring, (slot) => {
        const text = this.store.takeText(slot);
        if (text !== undefined) this.read(slot, text);
        this.spans.event(s, s.id, slot);
      });
      this.store.release(ring);
    }
    if (live) s.history.live = true;
  }

  /** Digests an event's data into its slot, and describes it there unless the exchange did. */
  private read(slot: EventSlot, data: string): void {
    digestInto(slot, data);
    if (slot.kind !== undefined) return;
    const info = describeEvent(data)[0] ?? NO_MESSAGE;
    if (data !== '' && info.kind === 'none') this.onUnreadable();
    setInfo(slot, info);
  }

  /** The session ended cleanly (DELETE) or was forgotten: its history goes unemitted. */
  drop(s: ProxySession): void {
    this.store.release(s.history.ring);
  }
}

export function newSessionHistory(): SessionHistory {
  return { ring: new EventRing(), live: false };
}
