import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SessionEventLog } from '../../src/proxy/session-event-log.js';

/** Ids without a sequence of their own (the SDK store's shape): the log numbers them. */
const e = (i: number): string => `s_${i}_x`;

test('past its bound the log forgets the oldest ids first, in arrival order, many times round', () => {
  const log = new SessionEventLog(3);
  for (let i = 1; i <= 3; i++) log.add(e(i), i);
  assert.equal(log.knows(e(1)), true);
  assert.equal(log.knows('nope'), false, 'nothing forgotten yet: an unseen id is certainly unseen');
  // A replay of a known id is not a new arrival: it neither moves nor evicts anything.
  assert.equal(log.add(e(1), 1), true);
  assert.deepEqual([log.seq, log.source], [1, 'observed'], 'a replay names the earlier record');
  log.add(e(4), 4);
  assert.equal(log.get(e(1)), undefined, 'e1 arrived first, so goes first (the replay did not refresh it)');
  assert.deepEqual([log.knows(e(2)), log.knows(e(3)), log.knows(e(4))], [true, true, true]);
  assert.equal(log.knows(e(1)), undefined, 'forgotten: can no longer tell');
  for (let i = 5; i <= 20; i++) log.add(e(i), i);
  assert.equal(log.size, 3);
  assert.equal(log.evicted, 17);
  for (let i = 1; i <= 17; i++) assert.equal(log.get(e(i)), undefined, `e${i} forgotten`);
  assert.deepEqual([18, 19, 20].map((i) => log.get(e(i))?.print), [18, 19, 20]);
  // Sequences of ids without one count the order the proxy first saw them in, evictions aside.
  assert.equal(log.get(e(20))?.seq, 20);
  assert.equal(log.get(e(20))?.source, 'observed');
});

test('a bound of one keeps the latest id; an id cut from a larger frame is known by its text', () => {
  const log = new SessionEventLog(1);
  log.add('a', 1);
  log.add('b', 2);
  assert.equal(log.size, 1);
  assert.equal(log.knows('b'), true);
  assert.equal(log.knows('a'), undefined);
  const frame = `id: ${'x'.repeat(40)}\ndata: {}\n\n`;
  const id = frame.slice(4, 44);
  log.add(id, 3);
  assert.equal(log.knows('x'.repeat(40)), true);
});

test('add names each event: the sequence its id carries (server, counter) or the order seen', () => {
  const log = new SessionEventLog(2);
  const inc = '0123456789abcdef';
  assert.equal(log.add(`${inc}-7`, 70), false);
  assert.deepEqual([log.seq, log.source], [7, 'server']);
  assert.equal(log.add('42', 420), false);
  assert.deepEqual([log.seq, log.source], [42, 'counter']);
  assert.equal(log.maxParsedSeq, 42);
  // Past the bound the slot of the oldest is reused: what it held must not leak into the newcomer.
  assert.equal(log.add('a4d1b6e0-2c4f-4a8e-9b1d-3f6e5c7a8b9d_1765000000000_k3j2h1g0', 99), false);
  assert.deepEqual([log.seq, log.source], [1, 'observed']);
  assert.equal(log.get(`${inc}-7`), undefined);
  assert.deepEqual(log.get('42'), { seq: 42, source: 'counter', print: 420 });
  assert.deepEqual(log.get('a4d1b6e0-2c4f-4a8e-9b1d-3f6e5c7a8b9d_1765000000000_k3j2h1g0'), { seq: 1, source: 'observed', print: 99 });
  // A known id keeps its first record, whatever it is sent with now.
  assert.equal(log.add('42', 1), true);
  assert.deepEqual([log.seq, log.source, log.get('42')?.print], [42, 'counter', 420]);
});

test('the log answers as a Map of ids in arrival order would, through growth, eviction and index shifts', () => {
  // A reference model (the log as it was: a Map and an arrival order) against the hashed log, over
  // random adds and lookups with few distinct ids (many replays) and bounds that are and are not
  // powers of two: every answer, sequence and print must agree.
  let seed = 7;
  const rand = (n: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed % n;
  };
  for (const max of [1, 3, 16, 17, 100, 1024]) {
    const log = new SessionEventLog(max);
    const model = new Map<string, { seq: number; print: number }>();
    const order: string[] = [];
    let observed = 0;
    let evicted = 0;
    const universe = max * 3 + 5;
    for (let op = 0; op < 20_000; op++) {
      const id = `stream_${rand(universe)}_${'k'.repeat(rand(3))}`;
      if (rand(4) === 0) {
        const want = model.get(id);
        assert.deepEqual(log.get(id), want && { seq: want.seq, source: 'observed', print: want.print }, `max ${max} op ${op}: get`);
        assert.equal(log.knows(id), want !== undefined ? true : evicted === 0 ? false : undefined);
        continue;
      }
      const print = rand(2 ** 30) * 8192 + rand(8192);
      const known = model.get(id);
      assert.equal(log.add(id, print), known !== undefined, `max ${max} op ${op}: add`);
      if (known === undefined) {
        if (order.length === max) {
          model.delete(order.shift()!);
          evicted++;
        }
        model.set(id, { seq: ++observed, print });
        order.push(id);
      }
      assert.equal(log.seq, model.get(id)!.seq);
      assert.equal(log.size, model.size);
      assert.equal(log.evicted, evicted);
    }
  }
});

test('a log without ids holds no arrays of its own: the first id gives it some', () => {
  const a = new SessionEventLog(1024);
  const b = new SessionEventLog(1024);
  assert.equal(a.knows('x'), false);
  assert.equal(a.get('x'), undefined);
  // Shared empty arrays until the first add (what a session that never sends an id costs).
  const arrays = (l: SessionEventLog): unknown[] => Object.values(l).filter((v) => ArrayBuffer.isView(v));
  assert.deepEqual(arrays(a).map((v, i) => v === arrays(b)[i]), arrays(a).map(() => true));
  assert.equal(a.add('x', 1), false);
  assert.equal(a.knows('x'), true);
  assert.equal(b.knows('x'), false, "a's id did not land in arrays b shares");
  for (let i = 0; i < 100; i++) b.add(`y${i}`, i);
  assert.deepEqual([a.size, a.knows('y3'), b.size, b.knows('x')], [1, false, 100, false]);
});
