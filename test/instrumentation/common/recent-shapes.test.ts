import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RecentShapes } from '../../../packages/instrumentation/src/common/recent-shapes.js';

describe('RecentShapes', () => {
  it('remembers a broken call for the window only', () => {
    const r = new RecentShapes(1000);
    const s = RecentShapes.shape('tools/call', 'charge', 'abc');
    r.note(s, 10_000);
    assert.equal(r.has(s, 10_500), true);
    assert.equal(r.has(s, 11_001), false);
    assert.equal(r.has(RecentShapes.shape('tools/call', 'other', 'abc'), 10_500), false);
  });
});
