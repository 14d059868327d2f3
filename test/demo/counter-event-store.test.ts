import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { CounterEventStore } from '../../src/demo/counter-event-store.js';

const msg = (n: number): JSONRPCMessage => ({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: n } });

async function replay(store: CounterEventStore, after: string): Promise<{ stream: string; ids: string[] }> {
  const ids: string[] = [];
  const stream = await store.replayEventsAfter(after, { send: async (id) => void ids.push(id) });
  return { stream, ids };
}

test('ids are a plain counter that restarts at e1 for every new store', async () => {
  const a = new CounterEventStore();
  assert.equal(await a.storeEvent('s', msg(1)), 'e1');
  assert.equal(await a.storeEvent('s', msg(2)), 'e2');
  assert.equal(await new CounterEventStore().storeEvent('s', msg(1)), 'e1');
});

test('a known cursor replays the rest of its own stream only', async () => {
  const store = new CounterEventStore();
  await store.storeEvent('a', msg(1)); // e1
  await store.storeEvent('b', msg(2)); // e2
  await store.storeEvent('a', msg(3)); // e3
  await store.storeEvent('a', msg(4)); // e4
  assert.deepEqual(await replay(store, 'e1'), { stream: 'a', ids: ['e3', 'e4'] });
  assert.deepEqual(await replay(store, 'e4'), { stream: 'a', ids: [] });
});

test('an unknown cursor replays the whole log from the start (the naive part)', async () => {
  const store = new CounterEventStore();
  await store.storeEvent('a', msg(1));
  await store.storeEvent('b', msg(2));
  assert.deepEqual(await replay(store, 'e7'), { stream: '', ids: ['e1', 'e2'] });
});

test('the log is bounded and reports each store', async () => {
  const seen: string[] = [];
  const store = new CounterEventStore((id) => seen.push(id), 2);
  for (let i = 1; i <= 3; i++) await store.storeEvent('a', msg(i));
  assert.equal(store.size, 2);
  assert.deepEqual(seen, ['e1', 'e2', 'e3']);
  assert.deepEqual((await replay(store, 'e1')).ids, ['e2', 'e3'], 'e1 was dropped, so it is unknown');
});
