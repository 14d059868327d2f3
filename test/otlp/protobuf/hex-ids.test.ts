/**
 * The decoder's JavaScript hex of span and trace ids must be what Buffer's hexSlice gives, for
 * every byte value and at any offset.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { hex16, hex8 } from '../../../src/otlp/protobuf/hex-ids.js';

test('hex8 and hex16 equal Buffer hex, every byte value, any offset', () => {
  const all = Buffer.alloc(256 + 16);
  for (let i = 0; i < 256; i++) all[i] = i;
  for (let s = 0; s + 16 <= all.length; s++) {
    assert.equal(hex8(all, s), all.toString('hex', s, s + 8));
    assert.equal(hex16(all, s), all.toString('hex', s, s + 16));
  }
  for (let i = 0; i < 200; i++) {
    const b = randomBytes(40);
    const s = i % 24;
    assert.equal(hex8(b, s), b.toString('hex', s, s + 8));
    assert.equal(hex16(b, s), b.toString('hex', s, s + 16));
  }
  // A Uint8Array view into a larger buffer, as request bodies are.
  const big = new Uint8Array(64).map((_, i) => (i * 37) & 0xff);
  const view = big.subarray(5, 40);
  assert.equal(hex16(view, 3), Buffer.from(view).toString('hex', 3, 19));
});
