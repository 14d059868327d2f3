import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StringTable } from '../../src/otlp/string-table.js';

const dec = (b: Uint8Array, s: number, e: number) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8', s, e);

test('returns the same instance for the same bytes and the right string under collisions', () => {
  const t = new StringTable(2, 16); // two slots: collisions are certain
  let decodes = 0;
  const count = (b: Uint8Array, s: number, e: number) => (decodes++, dec(b, s, e));
  const words = ['forkwatch.side', 'server', 'client', 'x', '', 'forkwatch.sidf', 'é✓'];
  for (let round = 0; round < 3; round++) {
    for (const w of words) {
      const b = Buffer.from(`##${w}##`);
      assert.equal(t.get(b, 2, b.length - 2, count), w);
    }
  }
  const b = Buffer.from('server');
  const t2 = new StringTable();
  const first = t2.get(b, 0, 6, count);
  const before = decodes;
  assert.equal(t2.get(Buffer.from('server'), 0, 6, count), first);
  assert.equal(decodes, before);
  // Longer than maxBytes: bypasses the table, still right.
  const long = 'y'.repeat(100);
  assert.equal(new StringTable(8, 16).get(Buffer.from(long), 0, 100, dec), long);
});

test('tags: computed once per decoded string, reported by lastTag on hits, misses, collisions and long strings', () => {
  let tagged = 0;
  const t = new StringTable(2, 16, (s) => (tagged++, s.startsWith('k') ? 1 : 2)); // two slots: collisions are certain
  const words = ['key1', 'value', 'k', 'v', 'key2', 'other'];
  for (let round = 0; round < 3; round++) {
    for (const w of words) {
      const b = Buffer.from(`#${w}#`);
      assert.equal(t.get(b, 1, b.length - 1, dec), w);
      assert.equal(t.lastTag, w.startsWith('k') ? 1 : 2, w);
    }
  }
  const hits = new StringTable(64, 16, (s) => (tagged++, s.length));
  tagged = 0;
  hits.get(Buffer.from('abc'), 0, 3, dec);
  hits.get(Buffer.from('abcdefgh'), 0, 8, dec);
  assert.equal(hits.get(Buffer.from('abc'), 0, 3, dec), 'abc');
  assert.equal(hits.lastTag, 3);
  assert.equal(tagged, 2); // the hit was not re-tagged
  const long = 'k'.repeat(40);
  assert.equal(t.get(Buffer.from(long), 0, 40, dec), long);
  assert.equal(t.lastTag, 1);
  const untagged = new StringTable(8, 16);
  untagged.get(Buffer.from('key'), 0, 3, dec);
  assert.equal(untagged.lastTag, 0);
});
