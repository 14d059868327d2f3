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
