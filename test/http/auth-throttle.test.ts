import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AuthThrottle } from '../../src/http/auth-throttle.js';

test('an address is throttled after its limit of wrong tokens, until the minute is over', () => {
  let t = 1_000_000;
  const th = new AuthThrottle({ failuresPerMinute: 3, now: () => t });
  for (let i = 0; i < 2; i++) th.failed('10.0.0.1');
  assert.equal(th.retryAfterSeconds('10.0.0.1'), 0);
  th.failed('10.0.0.1');
  assert.equal(th.retryAfterSeconds('10.0.0.1'), 60);
  assert.equal(th.retryAfterSeconds('10.0.0.2'), 0, 'other addresses are not held up');
  t += 59_001;
  assert.equal(th.retryAfterSeconds('10.0.0.1'), 1);
  t += 1_000;
  assert.equal(th.retryAfterSeconds('10.0.0.1'), 0);
  th.failed('10.0.0.1');
  assert.equal(th.retryAfterSeconds('10.0.0.1'), 0, 'a new minute starts a new count');
});

test('failures spread over minutes never throttle', () => {
  let t = 0;
  const th = new AuthThrottle({ failuresPerMinute: 3, now: () => t });
  for (let i = 0; i < 30; i++) {
    th.failed('a');
    t += 30_000;
    assert.equal(th.retryAfterSeconds('a'), 0);
  }
});

test('0 turns it off; the address table is bounded, forgetting the oldest window first', () => {
  const off = new AuthThrottle({ failuresPerMinute: 0 });
  for (let i = 0; i < 100; i++) off.failed('a');
  assert.equal(off.retryAfterSeconds('a'), 0);
  assert.equal(off.size, 0);

  let t = 0;
  const th = new AuthThrottle({ failuresPerMinute: 1, maxAddresses: 3, now: () => t });
  for (const a of ['a', 'b', 'c']) {
    th.failed(a);
    t += 1;
  }
  th.failed('d');
  assert.equal(th.size, 3);
  assert.equal(th.retryAfterSeconds('a'), 0, 'the oldest was forgotten');
  for (const a of ['b', 'c', 'd']) assert.ok(th.retryAfterSeconds(a) > 0, a);
});
