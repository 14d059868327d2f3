import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { GuardedEventStore } from '../../../packages/instrumentation/src/server/guarded-event-store.js';

const INC = '0123456789abcdef';
const note = (n: number): JSONRPCMessage => ({ jsonrpc: '2.0', method: 'notifications/message', params: { n } });

async function replay(store: GuardedEventStore, after: string): Promise<{ streamId: string; sent: Array<[string, JSONRPCMessage]> }> {
  const sent: Array<[string, JSONRPCMessage]> = [];
  const streamId = await store.replayEventsAfter(after, { send: async (id, m) => void sent.push([id, m]) });
  return { streamId, sent };
}

describe('GuardedEventStore', () => {
  it('ids are <incarnation>-<seq> from 1 and replay only the same stream, skipping priming events', async () => {
    const store = new GuardedEventStore(INC);
    const prime = await store.storeEvent('a', {} as JSONRPCMessage);
    const a1 = await store.storeEvent('a', note(1));
    await store.storeEvent('b', note(2));
    const a2 = await store.storeEvent('a', note(3));
    assert.equal(prime, `${INC}-1`);
    assert.equal(a2, `${INC}-4`);
    const r = await replay(store, prime);
    assert.equal(r.streamId, 'a');
    assert.deepEqual(r.sent, [
      [a1, note(1)],
      [a2, note(3)],
    ]);
    assert.deepEqual((await replay(store, a2)).sent, []);
    assert.deepEqual(store.lookup(a1), { found: true, seq: 2, streamId: 'a' });
  });

  it('tells why an id is absent, and never replays from the start', async () => {
    const store = new GuardedEventStore(INC, { maxEvents: 2 });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await store.storeEvent('s', note(i)));
    assert.equal(store.size, 2);
    assert.equal(store.evictedThroughSeq, 3);
    assert.deepEqual(store.lookup(ids[0]!), { found: false, reason: 'event_evicted' });
    assert.deepEqual(store.lookup(ids[2]!), { found: false, reason: 'event_evicted' });
    assert.equal(store.lookup(ids[3]!).found, true);
    assert.deepEqual(store.lookup('fedcba9876543210-4'), { found: false, reason: 'other_incarnation' });
    assert.deepEqual(store.lookup(`${INC}-99`), { found: false, reason: 'unknown_event' });
    assert.deepEqual(store.lookup('e7'), { found: false, reason: 'unknown_event' });
    assert.deepEqual(store.lookup(''), { found: false, reason: 'unknown_event' });
    await assert.rejects(replay(store, ids[0]!), /event_evicted/);
  });

  it('bounds bytes, evicting the oldest; clear drops everything and keeps nothing after', async () => {
    const one = Buffer.byteLength(JSON.stringify(note(1)));
    const store = new GuardedEventStore(INC, { maxBytes: one * 3 });
    for (let i = 0; i < 10; i++) await store.storeEvent('s', note(i % 10));
    assert.equal(store.size, 3);
    assert.ok(store.bytes <= one * 3);
    // Many evictions compact the array without losing the O(1) index.
    const many = new GuardedEventStore(INC, { maxEvents: 10 });
    let last = '';
    for (let i = 0; i < 1000; i++) last = await many.storeEvent('s', note(i));
    assert.deepEqual(many.lookup(last), { found: true, seq: 1000, streamId: 's' });
    assert.equal(many.lookup(`${INC}-991`).found, true);
    assert.equal(many.lookup(`${INC}-990`).found, false);

    assert.equal(store.clear(), 3);
    const after = await store.storeEvent('s', note(1));
    assert.equal(store.size, 0);
    assert.deepEqual(store.lookup(after), { found: false, reason: 'event_evicted' });
  });
});
