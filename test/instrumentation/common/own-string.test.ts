import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { detach } from '../../../packages/instrumentation/src/common/own-string.js';

describe('own strings', () => {
  it('detach returns an equal string for any code units', () => {
    for (const s of ['short', 'x'.repeat(40), 'a\ud800b'.repeat(10), 'é€𝄞'.repeat(100), 'y'.repeat(2000)]) assert.equal(detach(s), s);
  });
});
