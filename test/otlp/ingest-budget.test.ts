import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IngestBudget } from '../../src/otlp/ingest-budget.js';

test('leases take, grow and give back bytes; past the budget they are refused and counted', () => {
  const b = new IngestBudget(100);
  const a = b.acquire(60)!;
  assert.equal(b.inFlight, 60);
  assert.equal(b.acquire(50), undefined);
  assert.equal(b.refused, 1);
  const c = b.acquire(40)!;
  assert.equal(b.inFlight, 100);
  assert.equal(c.growTo(41), false, 'growing past the budget is refused');
  assert.equal(b.inFlight, 100, 'a refused growth takes nothing');
  a.release();
  a.release();
  assert.equal(b.inFlight, 40, 'release is idempotent');
  assert.equal(c.growTo(90), true);
  assert.equal(c.growTo(10), true, 'a lease never shrinks before release');
  assert.equal(c.bytes, 90);
  c.release();
  assert.equal(b.inFlight, 0);
  assert.equal(b.peakInFlight, 100);
});

test('alone in flight, a request is admitted and may grow past the budget (the body limits bound it)', () => {
  const b = new IngestBudget(10);
  const a = b.acquire(50)!;
  assert.ok(a);
  assert.equal(a.growTo(80), true);
  assert.equal(b.acquire(1), undefined);
  a.release();
  assert.throws(() => new IngestBudget(0), RangeError);
});
