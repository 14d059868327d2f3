import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { argsDigest } from '../../../packages/instrumentation/src/common/args-digest.js';

describe('argsDigest', () => {
  it('is the same for the same params in any key order and ignores _meta (a re-issue carries new trace context and token)', () => {
    const a = argsDigest({ name: 'charge', arguments: { card: 'x', cents: 5 }, _meta: { progressToken: 1, traceparent: '00-a-b-01' } });
    const b = argsDigest({ arguments: { cents: 5, card: 'x' }, name: 'charge', _meta: { progressToken: 7 } });
    assert.equal(a, b);
    assert.match(a, /^[0-9a-f]{16}$/);
  });
  it('differs when an argument differs, and for nested values', () => {
    assert.notEqual(argsDigest({ name: 'charge', arguments: { cents: 5 } }), argsDigest({ name: 'charge', arguments: { cents: 6 } }));
    assert.notEqual(argsDigest({ a: [1, { b: 2 }] }), argsDigest({ a: [1, { b: 3 }] }));
  });
  it('survives hostile depth without throwing', () => {
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 10_000; i++) deep = { d: deep };
    assert.match(argsDigest(deep), /^[0-9a-f]{16}$/);
    assert.equal(argsDigest(undefined), argsDigest({}));
  });
});
