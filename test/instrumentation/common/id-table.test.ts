import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hashId, IdTable } from '../../../packages/instrumentation/src/common/id-table.js';

describe('id table', () => {
  it('hashes ids to distinct, non-zero 53-bit numbers', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 100_000; i++) {
      const h = hashId(`stream-${i % 97}_${1700000000000 + i}_${(i * 7919).toString(36)}`);
      assert.ok(h > 0 && Number.isSafeInteger(h));
      seen.add(h);
    }
    assert.equal(seen.size, 100_000);
    assert.notEqual(hashId('e1'), hashId('e2'));
    assert.equal(hashId(''), hashId(''));
  });

  it('keeps the last max ids with their numbers, forgetting the oldest', () => {
    const t = new IdTable(100);
    for (let i = 1; i <= 250; i++) t.set(hashId(`e${i}`), i);
    assert.equal(t.size, 100);
    assert.equal(t.evicted, 150);
    for (let i = 1; i <= 150; i++) assert.equal(t.get(hashId(`e${i}`)), undefined, `e${i}`);
    for (let i = 151; i <= 250; i++) assert.equal(t.get(hashId(`e${i}`)), i, `e${i}`);
    t.set(hashId('e200'), 7);
    assert.equal(t.get(hashId('e200')), 7);
    assert.equal(t.size, 100);
  });

  it('stays consistent under collisions of home slots and deletions (against a Map)', () => {
    const t = new IdTable(37);
    const ref = new Map<number, number>();
    const order: number[] = [];
    let x = 1;
    for (let i = 0; i < 20_000; i++) {
      x = (x * 1103515245 + 12345) % 2147483648;
      const h = (x % 300) * 4294967296 + 1 + (x % 7);
      if (!ref.has(h)) {
        if (order.length === 37) ref.delete(order.shift()!);
        order.push(h);
      }
      ref.set(h, i);
      t.set(h, i);
      assert.equal(t.size, ref.size);
    }
    for (const [h, v] of ref) assert.equal(t.get(h), v);
  });

  it('max 0 keeps nothing', () => {
    const t = new IdTable(0);
    t.set(hashId('a'), 1);
    assert.equal(t.get(hashId('a')), undefined);
  });
});
