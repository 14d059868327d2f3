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

  it('a 10,000-stream server stays within maxBufferedEvents; the least recently grown history goes first', () => {
    const tr = tracing();
    const emitters = new ServerEmitters({ tracerProvider: tr.provider, salt: '', recordRawSessionId: false, logger: diag });
    const store = new EventRingStore(32, 50_000);
    const sse = new SseRecorder(emitters, store, 10_000);
    const states: TransportState[] = [];
    const ctx = { method: 'POST', headers: {}, parent: undefined, lastEventId: undefined } as unknown as RequestContext;
    let max = 0;
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
        sse.onSseEvent(state, ctx, { id: String(e), data: `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":${s},"progress":${e}}}`, event: 'message' } as never);
        max = Math.max(max, store.bufferedEvents);
      }
    }
    assert.ok(max <= 50_000, `buffered ${max}`);
    assert.equal(store.bufferedEvents, 50_000);
    assert.equal(tr.spans().length, 0, 'no moment, no span');
    // The newest 5,000 sessions kept their whole history; the oldest lost theirs.
    assert.equal(states[9_999]!.ring!.slots.length, 10);
    assert.equal(states[0]!.ring!.slots.length, 0);
    // A moment on a kept session emits its history, oldest first.
    sse.moment(states[9_999], undefined);
    const seqs = tr.spans().map((s) => s.attributes['forkwatch.sse.event.seq']);
    assert.deepEqual(seqs, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    assert.equal(store.bufferedEvents, 49_990);
  });
});
