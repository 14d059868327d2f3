import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StringDecoder } from 'node:string_decoder';
import { ChunkText } from '../../src/proxy/chunk-text.js';

const TEXT = 'id: a\ndata: {"x":"é—😀 ok"}\n\nid: b\ndata: {"y":"ünïcödé 😀😀"}\n\n';

/** Every way of cutting `bytes` in up to three pieces. */
function* cuts(bytes: Buffer): Generator<Buffer[]> {
  for (let i = 0; i <= bytes.length; i++) {
    for (let j = i; j <= bytes.length; j += 3) yield [bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)];
  }
}

test('a body cut anywhere, inside characters too, decodes to its text, chunk by chunk as StringDecoder does', () => {
  const bytes = Buffer.from(TEXT, 'utf8');
  let n = 0;
  for (const pieces of cuts(bytes)) {
    const mine = new ChunkText();
    const ref = new StringDecoder('utf8');
    let got = '';
    for (const p of pieces) {
      const t = mine.write(p);
      assert.equal(t, ref.write(p), `cut at ${pieces.map((x) => x.length).join('+')}`);
      got += t;
    }
    got += mine.end();
    assert.equal(got, TEXT);
    n++;
  }
  assert.ok(n > 100);
});

test('a body that stops inside a character ends with U+FFFD, as StringDecoder says', () => {
  const bytes = Buffer.from('data: é', 'utf8');
  const mine = new ChunkText();
  assert.equal(mine.write(bytes.subarray(0, bytes.length - 1)), 'data: ');
  assert.equal(mine.end(), '\ufffd');
  const ascii = new ChunkText();
  assert.equal(ascii.write(Buffer.from('data: x\n\n')), 'data: x\n\n');
  assert.equal(ascii.end(), '');
});
