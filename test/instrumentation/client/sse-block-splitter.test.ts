import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SseBlockSplitter } from '../../../packages/instrumentation/src/client/sse-block-splitter.js';

describe('SseBlockSplitter', () => {
  it('yields whole raw blocks, keeping comments, retry and CRLF, whatever the chunking', () => {
    const text = ': hi\r\nretry: 5\r\nid: e1\r\ndata: a\r\n\r\nid: e2\ndata: b\n\n';
    for (let size = 1; size <= text.length; size++) {
      const s = new SseBlockSplitter(1000);
      const pieces = [];
      for (let i = 0; i < text.length; i += size) pieces.push(...s.push(text.slice(i, i + size)));
      assert.deepEqual(pieces, [
        { text: ': hi\r\nretry: 5\r\nid: e1\r\ndata: a\r\n\r\n', complete: true },
        { text: 'id: e2\ndata: b\n\n', complete: true },
      ], `chunk size ${size}`);
      assert.equal(s.rest(), '');
    }
  });

  it('passes an oversized block through uninspected, then resynchronises', () => {
    const s = new SseBlockSplitter(50);
    const big = `id: big\ndata: ${'x'.repeat(200)}\n\nid: ok\ndata: 1\n\n`;
    const pieces = [];
    for (let i = 0; i < big.length; i += 7) pieces.push(...s.push(big.slice(i, i + 7)));
    assert.equal(pieces.map((p) => p.text).join(''), big, 'no byte lost or added');
    assert.deepEqual(pieces.filter((p) => p.complete), [{ text: 'id: ok\ndata: 1\n\n', complete: true }]);
  });
});
