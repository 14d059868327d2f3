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

test('hashBytes over ASCII bytes is hash64 of the string they spell (every length mod 4, any alignment, past a scratch piece)', () => {
  for (const n of [0, 1, 2, 3, 4, 5, 6, 7, 64, 65, 1023, 1024, 1025, 2049]) {
    let s = '';
    for (let i = 0; i < n; i++) s += String.fromCharCode(32 + ((i * 7919) % 95));
    for (const pad of ['', 'x', 'xy', 'xyz']) {
      // A slice of a larger buffer at an odd offset, as a socket's chunk is.
      const framed = Buffer.from(`${pad}id: ${s}\nmore`).subarray(pad.length);
      assert.equal(`${hashBytes(framed, 4, 4 + n, 7, 11)}:${hashHi()}`, both(s), `${n} chars, offset ${pad.length}`);
      assert.equal(`${idHashBytes(framed, 4, 4 + n)}:${hashHi()}`, `${idHash(s)}:${hashHi()}`, `${n} chars, offset ${pad.length}`);
    }
  }
});

test('hash64: an ASCII string and a non-ASCII one, or one past the scratch, are hashed apart; bytes after the end are not read', () => {
  const seen = new Set<string>();
  for (const s of ['', 'a', 'ab', 'abc', 'abcd', 'abcde', 'a\u0000', 'a\u0000\u0000', 'é', 'a\u00e9', 'ab\u0100', 'x'.repeat(1025), `${'x'.repeat(1024)}é`]) seen.add(both(s));
  assert.equal(seen.size, 13);
  const b = Buffer.from('abcdefgh');
  for (let n = 0; n <= 7; n++) assert.equal(`${hashBytes(b, 0, n, 7, 11)}:${hashHi()}`, both('abcdefgh'.slice(0, n)), `${n} bytes`);
});
