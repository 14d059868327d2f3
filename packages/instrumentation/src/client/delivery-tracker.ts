import type { Context } from '@opentelemetry/api';
import {
  ATTR_CLIENT_DELIVERY,
  ATTR_CLIENT_SEEN_BEFORE,
  ATTR_JSONRPC_KIND,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_METHOD_NAME,
  ATTR_PROGRESS_TOKEN,
  ATTR_SSE_EVENT_ID,
  ATTR_SSE_EVENT_SEQ,
  ATTR_SSE_EVENT_SEQ_SOURCE,
  ATTR_SSE_PAYLOAD_BYTES,
  ATTR_SSE_PAYLOAD_DIGEST,
  ATTR_SSE_STREAM_ID,
  META_INCARNATION,
  SPAN_SSE_EVENT,
} from '../semconv.js';
import { epochNow } from '../common/deferred-requests.js';
import { digestHex, digestInto, EventRing, type EventSlot } from '../common/event-ring.js';
import { hashId } from '../common/id-table.js';
import { parseEventId } from '../common/incarnation.js';
import { payloadDigest } from '../common/session-key.js';
import { detach } from '../common/own-string.js';
import type { SseEvent } from '../common/sse-parser.js';
import type { ClientCore } from './client-core.js';
import { boundedSessionId } from './http-message.js';
import { inspectData, inspectMessage, sameMessage } from './inspect-message.js';
import type { Attrs, Channel, Delivery, PendingEvent, StreamTap } from './internal-types.js';
import type { AttachableTransport } from './types.js';

/**
 * Whether each wire event reached the SDK: `forkwatch.sse.event` with `forkwatch.client.delivery`
 * decided when the SDK's onmessage sees the message, or `dropped` after `deliveryTimeoutMs`.
 */
export class DeliveryTracker {
  /** Channels with events awaiting a delivery decision: what flush must settle. */
  private readonly armed = new Set<Channel>();

  constructor(private readonly core: ClientCore) {}

  /** Emits the events awaiting a delivery decision now, without a verdict (the process is leaving). */
  flush(): void {
    for (const channel of this.armed) {
      if (channel.timer) clearTimeout(channel.timer);
      channel.timer = undefined;
      for (const p of channel.pending) {
        if (p.decided) continue;
        p.decided = true;
        this.emitEvent(p.sessionId, p.attrs, undefined, p.ctx);
      }
      channel.pending.length = 0;
    }
    this.armed.clear();
  }

  onSseEvent(channel: Channel, ev: SseEvent, sessionId: string | undefined, tap: StreamTap, ctx: Context): void {
    if (ev.id === undefined) return;
    const core = this.core;
    const state = sessionId ? core.session(sessionId) : undefined;
    if (state === undefined || state.hot) return this.record(channel, ev as SseEvent & { id: string }, sessionId, tap, ctx);
    // A cold session: only what later events and a later moment need is kept, nothing is parsed
    // unless the data can carry an incarnation (an InitializeResult's _meta).
    if (ev.data.includes(META_INCARNATION)) {
      const info = inspectData(ev.data, core.maxParseChars);
      if (info.incarnation) state.incarnation = info.incarnation;
    }
    // Ids are kept hashed, with the stream they came on: no string per event outlives it.
    const seenBefore = core.noteEvent(state, tap, hashId(ev.id));
    if (!core.emitter.enabled) return;
    const ring = (state.ring ??= new EventRing());
    const slot = core.rings.next(ring);
    slot.id = detach(ev.id);
    slot.streamId = tap.streamId;
    slot.flag = seenBefore;
    slot.at = epochNow();
    slot.origin = ctx;
    // Digested and read only if a moment emits it (most slots are reused unread), while the
    // store's text budget lasts; past it, now.
    if (!core.rings.keepText(slot, ev.data)) this.read(slot, ev.data);
  }

  /** Digests and reads an event's payload into its slot. */
  private read(slot: EventSlot, data: string): void {
    digestInto(slot, data);
    const m = this.core.scanner.scan(data);
    slot.kind = m.kind;
    slot.rpcId = m.id;
    slot.method = m.method;
    slot.token = m.progressToken;
  }

  /**
   * A moment on the session (its reconnect with Last-Event-ID, an answer under another session id
   * or incarnation): its buffered events are emitted, and with `sticky` its later ones as they arrive.
   */
  moment(sessionId: string | undefined, sticky: boolean): void {
    if (!sessionId) return;
    const state = this.core.sessions.get(sessionId);
    if (state === undefined) return;
    if (sticky) state.hot = true;
    const ring = state.ring;
    if (ring === undefined || ring.slots.length === 0) return;
    const core = this.core;
    const inc = core.incarnationAttrs(sessionId);
    core.rings.forEach(ring, (slot) => {
      const text = core.rings.takeText(slot);
      if (text !== undefined) this.read(slot, text);
      const parsed = parseEventId(slot.id);
      core.emitter.emit(
        SPAN_SSE_EVENT,
        sessionId,
        {
          [ATTR_SSE_EVENT_ID]: slot.id,
          [ATTR_SSE_EVENT_SEQ]: parsed.seq,
          [ATTR_SSE_EVENT_SEQ_SOURCE]: parsed.source,
          [ATTR_SSE_STREAM_ID]: slot.streamId,
          [ATTR_SSE_PAYLOAD_DIGEST]: digestHex(slot),
          [ATTR_SSE_PAYLOAD_BYTES]: slot.bytes,
          [ATTR_JSONRPC_KIND]: slot.kind,
          [ATTR_JSONRPC_REQUEST_ID]: slot.rpcId,
          [ATTR_MCP_METHOD_NAME]: slot.method,
          [ATTR_PROGRESS_TOKEN]: slot.token,
          [ATTR_CLIENT_SEEN_BEFORE]: slot.flag,
          [ATTR_CLIENT_DELIVERY]: slot.kind === 'none' && slot.bytes === 0 ? 'no_payload' : undefined,
          ...inc,
        },
        slot.origin as Context,
        slot.at,
      );
      slot.origin = undefined;
    });
    core.rings.release(ring);
  }

  /** An event of a hot session (or one without a session id): recorded, and its delivery awaited, as it arrives. */
  private record(channel: Channel, ev: SseEvent & { id: string }, sessionId: string | undefined, tap: StreamTap, ctx: Context): void {
    const core = this.core;
    const info = inspectData(ev.data, core.maxParseChars);
    if (info.incarnation && sessionId) core.session(sessionId).incarnation = info.incarnation;
    const hash = hashId(ev.id);
    let seenBefore: boolean | undefined;
    if (sessionId) seenBefore = core.noteEvent(core.session(sessionId), tap, hash);
    else core.noteEvent(core.noSession, tap, hash);
    const streamId = tap.streamId!;
    const parsed = parseEventId(ev.id);
    const attrs: Attrs = {
      [ATTR_SSE_EVENT_ID]: ev.id,
      [ATTR_SSE_EVENT_SEQ]: parsed.seq,
      [ATTR_SSE_EVENT_SEQ_SOURCE]: parsed.source,
      [ATTR_SSE_STREAM_ID]: streamId,
      [ATTR_SSE_PAYLOAD_DIGEST]: payloadDigest(ev.data),
      [ATTR_SSE_PAYLOAD_BYTES]: Buffer.byteLength(ev.data, 'utf8'),
      [ATTR_JSONRPC_KIND]: info.kind,
      [ATTR_JSONRPC_REQUEST_ID]: info.id,
      [ATTR_MCP_METHOD_NAME]: info.method,
      [ATTR_PROGRESS_TOKEN]: info.progressToken,
      [ATTR_CLIENT_SEEN_BEFORE]: seenBefore,
      ...core.incarnationAttrs(sessionId),
    };
    if (ev.data.length === 0) return this.emitEvent(sessionId, attrs, 'no_payload', ctx);
    // The SDK delivers only `message` events with valid JSON-RPC; others cannot be awaited.
    if (!channel.attached || info.kind === 'none' || (ev.event !== 'message' && ev.event !== '')) {
      return this.emitEvent(sessionId, attrs, undefined, ctx);
    }
    if (channel.pending.length >= core.maxPending) {
      const oldest = channel.pending.shift()!;
      this.decide(oldest, 'dropped');
    }
    channel.pending.push({ streamId, sessionId, info, attrs, ctx, deadline: Date.now() + core.deliveryTimeoutMs, decided: false });
    this.armSweep(channel);
  }

  /**
   * Observes what reaches the SDK's protocol layer through `transport.onmessage`: an accessor
   * wraps whatever handler the Client assigns.
   */
  hookOnMessage(transport: AttachableTransport, channel: Channel): void {
    let inner = transport.onmessage;
    const wrappers = new WeakMap<object, (message: unknown, extra?: unknown) => void>();
    let lastInner: unknown;
    let lastWrapper: ((message: unknown, extra?: unknown) => void) | undefined;
    let depth = 0;
    const observe = (message: unknown): void => {
      try {
        this.onDelivered(channel, message, transport.sessionId);
      } catch (err) {
        this.core.fail('delivery hook', err);
      }
    };
    Object.defineProperty(transport, 'onmessage', {
      configurable: true,
      enumerable: true,
      get() {
        const h = inner;
        if (!h) return undefined;
        // Read on every message: the handler of the last read is answered without a lookup.
        if (h === lastInner) return lastWrapper;
        let w = wrappers.get(h);
        if (!w) {
          // Protocol.connect chains the previous handler inside its own: observe once per message.
          w = function (this: unknown, message: unknown, extra?: unknown) {
            if (depth === 0) observe(message);
            depth++;
            try {
              return h.call(this, message, extra);
            } finally {
              depth--;
            }
          };
          wrappers.set(h, w);
        }
        lastInner = h;
        lastWrapper = w;
        return w;
      },
      set(v) {
        inner = v;
      },
    });
  }

  private emitEvent(sessionId: string | undefined, attrs: Attrs, delivery: Delivery | undefined, ctx: Context): void {
    this.core.emitter.emit(SPAN_SSE_EVENT, sessionId, { ...attrs, [ATTR_CLIENT_DELIVERY]: delivery }, ctx);
  }

  private decide(p: PendingEvent, delivery: Delivery): void {
    if (p.decided) return;
    p.decided = true;
    this.emitEvent(p.sessionId, p.attrs, delivery, p.ctx);
  }

  private armSweep(channel: Channel): void {
    if (channel.timer || channel.pending.length === 0) {
      if (channel.pending.length === 0) this.armed.delete(channel);
      return;
    }
    this.armed.add(channel);
    const wait = Math.max(1, channel.pending[0]!.deadline - Date.now());
    channel.timer = setTimeout(() => {
      channel.timer = undefined;
      try {
        const now = Date.now();
        while (channel.pending.length > 0 && channel.pending[0]!.deadline <= now) this.decide(channel.pending.shift()!, 'dropped');
        this.armSweep(channel);
      } catch (err) {
        this.core.fail('delivery sweep', err);
      }
    }, wait);
    channel.timer.unref?.();
  }

  private onDelivered(channel: Channel, message: unknown, transportSessionId: string | undefined): void {
    if (channel.pending.length === 0) return;
    const info = inspectMessage(message);
    const sid = boundedSessionId(transportSessionId, this.core.maxSessionIdChars);
    let idx = channel.pending.findIndex((p) => p.sessionId === sid && sameMessage(p.info, info));
    if (idx < 0) idx = channel.pending.findIndex((p) => sameMessage(p.info, info));
    if (idx < 0) return;
    const hit = channel.pending[idx]!;
    const keep: PendingEvent[] = [];
    for (let i = 0; i < channel.pending.length; i++) {
      const p = channel.pending[i]!;
      // Events of the same stream that came before the delivered one were skipped by a layer below.
      if (i < idx && p.streamId === hit.streamId) this.decide(p, 'dropped');
      else if (i !== idx) keep.push(p);
    }
    channel.pending = keep;
    this.decide(hit, 'delivered');
  }
}
