import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UiSessions } from '../../src/ui/ui-sessions.js';

test('UiSessions: random ids, valid until expiry or revoke, never more than maxSessions (the oldest goes first)', () => {
  let clock = 1_000;
  const s = new UiSessions({ ttlMs: 10_000, maxSessions: 3, now: () => clock });
  const a = s.create();
  assert.match(a, /^[A-Za-z0-9_-]{43}$/);
  const b = s.create();
  assert.notEqual(a, b);
  assert.ok(s.valid(a) && s.valid(b));
  s.revoke(a);
  assert.equal(s.valid(a), false);
  const c = s.create();
  const d = s.create();
  const e = s.create();
  assert.equal(s.size, 3);
  assert.equal(s.valid(b), false, 'the oldest was signed out to make room');
  assert.ok(s.valid(c) && s.valid(d) && s.valid(e));
  clock += 10_000;
  assert.equal(s.valid(c), false, 'expired');
  s.create();
  assert.equal(s.size, 1, 'expired sign-ins are dropped when a new one is made');
  assert.equal(s.valid('forged'), false);
  assert.equal(s.lifetimeMs, 10_000);
});
