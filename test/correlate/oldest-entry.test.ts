import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OldestEntry, OrderedTable } from '../../src/correlate/oldest-entry.js';

/** The oldest entry by a walk from the start, as the engine found it before OldestEntry. */
function walked<V>(m: Map<string, V>, skip: string): [string, V] | undefined {
  for (const e of m) if (e[0] !== skip) return e;
  return undefined;
}

// The engine's use: entries added at the back, re-inserted (delete + set) when touched, evicted
// from the front, deleted anywhere, the map emptied and refilled; `skip` the entry being written.
test('OldestEntry gives what a walk from the start gives, through adds, re-inserts, evictions and deletes', () => {
  let seed = 42;
  const rnd = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const m = new Map<string, number>();
  const oldest = new OldestEntry(m);
  const del = (k: string): void => {
    m.delete(k);
    oldest.deleted(k);
  };
  let next = 0;
  let checks = 0;
  for (let step = 0; step < 20_000; step++) {
    const keys = [...m.keys()];
    const op = rnd(10);
    if (op < 4 || keys.length === 0) m.set(`k${next++}`, step);
    else if (op < 6) {
      const k = keys[rnd(keys.length)]!;
      del(k);
      m.set(k, step);
    } else if (op < 8) {
      const f = oldest.first('');
      if (f !== undefined) del(f[0]);
    } else if (op < 9) del(keys[rnd(keys.length)]!);
    else if (rnd(50) === 0) for (const k of keys) del(k);
    const skip = keys.length > 0 && rnd(4) === 0 ? keys[keys.length - 1]! : '';
    assert.deepEqual(oldest.first(skip), walked(m, skip), `step ${step}`);
    checks++;
  }
  assert.equal(checks, 20_000);
});

test('an OrderedTable tells its own cursor of every delete: a re-inserted entry is no longer the oldest', () => {
  const t = new OrderedTable<number>();
  for (const k of ['a', 'b', 'c']) t.set(k, 0);
  assert.deepEqual(t.oldest('x'), ['a', 0]);
  t.delete('a');
  assert.deepEqual(t.oldest('x'), ['b', 0]);
  // Moved to the back (a delete and a set): the cursor must not keep it as the oldest.
  t.delete('b');
  t.set('b', 1);
  assert.deepEqual(t.oldest('x'), ['c', 0]);
  assert.deepEqual(t.oldest('c'), ['b', 1], 'the oldest other than the one being written');
  t.delete('c');
  t.delete('b');
  assert.equal(t.oldest('x'), undefined);
});
