import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hash64, hashBytes, hashHi, idHash, idHashBytes } from '../../src/proxy/id-hash.js';

const both = (s: string): string => `${hash64(s, 7, 11)}:${hashHi()}`;

test('hash64 depends on the string, not how V8 holds it (flat, sliced, concatenated, two-byte)', () => {
  const frame = `id: ${'a1b2c3d4-'.repeat(8)}_1733550000000_k3j2h1\ndata: {}\n\n`;
  const id = frame.slice(4, frame.indexOf('\n'));
  const flat = Buffer.from(id).toString();
  const cons = id.slice(0, 20) + id.slice(20);
  assert.equal(both(id), both(flat));
  assert.equal(both(cons), both(flat));
  const wide = `é€${id}`;
  assert.equal(both(wide.slice(2)), both(flat));
  assert.equal(idHash(id), idHash(flat));
});

test('hash64: what an earlier, longer string left in the scratch does not reach a shorter one', () => {
  for (const n of [0, 1, 2, 3, 1023, 1024, 1025, 2047]) {
    const s = 'q'.repeat(n);
    const alone = both(s);
    both('z'.repeat(3000));
    assert.equal(both(s), alone, `${n} chars`);
  }
});

test('hash64: one unit changed anywhere, or one appended (a zero unit included), is another hash', () => {
  const base = `${'é'.repeat(3)}x${'y'.repeat(2100)}`;
  const seen = new Set<string>([both(base), both(`${base}\0`), both(base.slice(0, -1))]);
  for (const at of [0, 1, 3, 4, 1023, 1024, 1025, 2047, 2048, base.length - 1]) {
    for (const flip of [1, 0x100, 0x8000]) seen.add(both(base.slice(0, at) + String.fromCharCode(base.charCodeAt(at) ^ flip) + base.slice(at + 1)));
  }
  assert.equal(seen.size, 3 + 10 * 3);
  const lone = new Set(['\ud800', '\ud801', '\udc00', '\ufffd', 'a\ud800', 'a\ufffd'].map(both));
  assert.equal(lone.size, 6, 'lone surrogates are hashed as the units they are, not replaced');
});

test('hashBytes over ASCII bytes is hash64 of the string they spell (even and odd lengths, past a scratch piece)', () => {
  for (const n of [0, 1, 2, 3, 64, 65, 1023, 1024, 1025, 2049]) {
    let s = '';
    for (let i = 0; i < n; i++) s += String.fromCharCode(32 + ((i * 7919) % 95));
    const framed = Buffer.from(`id: ${s}\n`);
    assert.equal(`${hashBytes(framed, 4, 4 + n, 7, 11)}:${hashHi()}`, both(s), `${n} chars`);
    assert.equal(`${idHashBytes(framed, 4, 4 + n)}:${hashHi()}`, `${idHash(s)}:${hashHi()}`, `${n} chars`);
  }
});
