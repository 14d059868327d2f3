import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { digestHex, digestInto, EventRing, EventRingStore, EventSlot } from '../../../packages/instrumentation/src/common/event-ring.js';
import { payloadDigest } from '../../../packages/instrumentation/src/common/session-key.js';
import { EventIdTracker } from '../../../packages/instrumentation/src/server/event-id-tracker.js';
import type { TransportState } from '../../../packages/instrumentation/src/server/internal-types.js';
import type { RequestContext } from '../../../packages/instrumentation/src/server/request-context.js';
import { ServerEmitters } from '../../../packages/instrumentation/src/server/server-emitters.js';
import { SseRecorder } from '../../../packages/instrumentation/src/server/sse-recorder.js';
import { diag } from '@opentelemetry/api';
import { tracing } from '../server/harness.js';

const ids = (store: EventRingStore, ring: EventRing): string[] => {
  const out: string[] = [];
  store.forEach(ring, (s) => out.push(s.id));
  return out;
};

describe('event ring store', () => {
  it('keeps the last perSession events of a session, oldest first, reusing its slots', () => {
    const store = new EventRingStore(3, 100);
    const ring = new EventRing();
    const firstSlots: unknown[] = [];
    for (let i = 1; i <= 7; i++) {
      const slot = store.next(ring);
      slot.id = `e${i}`;
      if (i <= 3) firstSlots.push(slot);
    }
    assert.deepEqual(ids(store, ring), ['e5', 'e6', 'e7']);
    assert.ok(ring.slots.every((s) => firstSlots.includes(s)), 'no slot allocated after the ring is full');
    assert.equal(store.bufferedEvents, 3);
    store.release(ring);
    assert.equal(store.bufferedEvents, 0);
  });

  it('keeps a digest and a size of the payload, not the payload', () => {
    const slot = new EventSlot();
    const data = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1,"message":"é"}}';
    digestInto(slot, data);
    assert.equal(digestHex(slot), payloadDigest(data));
    assert.equal(slot.bytes, Buffer.byteLength(data, 'utf8'));
    digestInto(slot, '');
    assert.equal(digestHex(slot), payloadDigest(''));
    assert.equal(slot.bytes, 0);
    assert.ok(!Object.values(slot).includes(data));
    // Digests whose words have the top bit set or start with zero bytes read back the same.
    for (let i = 0; i < 200; i++) {
      const d = `{"id":${i},"text":"ü${'x'.repeat(i % 7)}"}`;
      digestInto(slot, d);
      assert.equal(digestHex(slot), payloadDigest(d));
    }
  });

  it('keeps payload text undigested within maxTextChars, and drops it when a slot is reused or its ring released', () => {
    const store = new EventRingStore(2, 100, 10);
    const a = new EventRing();
    const s1 = store.next(a);
    assert.equal(store.keepText(s1, 'abcd'), true);
    const s2 = store.next(a);
    assert.equal(store.keepText(s2, 'efghij'), true);
    assert.equal(store.bufferedTextChars, 10);
    // Over the budget: not kept, the caller digests it now.
    const b = new EventRing();
    const s3 = store.next(b);
    assert.equal(store.keepText(s3, 'k'), false);
    assert.equal(s3.text, undefined);
    // Empty text is never kept (its digest is a constant).
    assert.equal(store.keepText(s3, ''), false);
    // a's oldest slot is reused: its text goes unread, and the budget has room again.
    const s4 = store.next(a);
    assert.equal(s4, s1);
    assert.equal(s4.text, undefined);
    assert.equal(store.bufferedTextChars, 6);
    assert.equal(store.takeText(s2), 'efghij');
    assert.equal(s2.text, undefined);
    assert.equal(store.bufferedTextChars, 0);
    assert.equal(store.keepText(s4, 'lmn'), true);
    // Kept twice on one slot: the first text is no longer counted.
    assert.equal(store.keepText(s4, 'op'), true);
    assert.equal(store.bufferedTextChars, 2);
    store.release(a);
    assert.equal(store.bufferedTextChars, 0);
    // The default keeps none: every event is digested as it passes (the proxy's store).
    const none = new EventRingStore(2, 100);
    assert.equal(none.keepText(none.next(new EventRing()), 'x'), false);
  });

  it('a 10,000-stream server stays within maxBufferedEvents; the least recently grown history goes first', () => {
    const tr = tracing();
    const emitters = new ServerEmitters({ tracerProvider: tr.provider, salt: '', recordRawSessionId: false, logger: diag });
    // A text budget that runs out part way: later events are digested as they pass.
    const store = new EventRingStore(32, 50_000, 1_000_000);
    const sse = new SseRecorder(emitters, store, 10_000);
    const states: TransportState[] = [];
    const ctx = { method: 'POST', headers: {}, parent: undefined, lastEventId: undefined } as unknown as RequestContext;
    let max = 0;
    let maxText = 0;
    const data = (s: number, e: number): string => `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":${s},"progress":${e}}}`;
    for (let s = 0; s < 10_000; s++) {
      const state = {
        transport: { sessionId: `sid-${s}` },
        sessionId: `sid-${s}`,
        incarnation: 'abcdef0123456789',
        tracker: new EventIdTracker(64),
        ended: false,
        deleting: false,
        inflight: [],
        unanswered: new Map(),
        ring: undefined,
        hot: false,
      } as unknown as TransportState;
      states.push(state);
      for (let e = 1; e <= 10; e++) {
        sse.onSseEvent(state, ctx, { id: String(e), data: data(s, e), event: 'message' } as never);
        max = Math.max(max, store.bufferedEvents);
        maxText = Math.max(maxText, store.bufferedTextChars);
      }
    }
    assert.ok(max <= 50_000, `buffered ${max}`);
    assert.ok(maxText <= 1_000_000 && maxText > 900_000, `text ${maxText}`);
    assert.equal(store.bufferedEvents, 50_000);
    assert.equal(tr.spans().length, 0, 'no moment, no span');
    // The newest 5,000 sessions kept their whole history; the oldest lost theirs.
    assert.equal(states[9_999]!.ring!.slots.length, 10);
    assert.equal(states[0]!.ring!.slots.length, 0);
    assert.ok(states[9_999]!.ring!.slots.every((slot) => slot.text === undefined));
    assert.ok(states[5_000]!.ring!.slots.every((slot) => slot.text !== undefined));
    // A moment on a kept session emits its history, oldest first.
    sse.moment(states[9_999], undefined);
    const seqs = tr.spans().map((s) => s.attributes['forkwatch.sse.event.seq']);
    assert.deepEqual(seqs, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    assert.equal(store.bufferedEvents, 49_990);
    // Digested and read at the moment, as if as they passed (these kept no text: the budget ran out).
    assert.deepEqual(tr.spans().map((s) => s.attributes['forkwatch.sse.payload.digest']), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((e) => payloadDigest(data(9_999, e))));
    // Sessions whose text was kept: digested and read only now, the same attributes.
    const before = tr.spans().length;
    sse.moment(states[5_000], undefined);
    const kept = tr.spans().slice(before);
    assert.deepEqual(kept.map((s) => s.attributes['forkwatch.sse.payload.digest']), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((e) => payloadDigest(data(5_000, e))));
    assert.deepEqual(kept.map((s) => s.attributes['forkwatch.sse.payload.bytes']), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((e) => data(5_000, e).length));
    assert.ok(kept.every((s) => s.attributes['mcp.method.name'] === 'notifications/progress' && s.attributes['forkwatch.progress.token'] === '5000'));
    assert.ok(store.bufferedTextChars <= 1_000_000 - 10 * data(5_000, 1).length);
  });
});
