import { it } from 'node:test';
import assert from 'node:assert/strict';
import { findingId } from '../../src/correlate/finding-id.js';

it('finding ids are 16 hex, stable, and differ by kind, key and identity', () => {
  const a = findingId('dedup_loss', 'k1', 'resume:e7');
  assert.match(a, /^[0-9a-f]{16}$/);
  assert.equal(findingId('dedup_loss', 'k1', 'resume:e7'), a);
  assert.notEqual(findingId('sequence_regression', 'k1', 'resume:e7'), a);
  assert.notEqual(findingId('dedup_loss', 'k2', 'resume:e7'), a);
  assert.notEqual(findingId('dedup_loss', 'k1', 'resume:e8'), a);
});
