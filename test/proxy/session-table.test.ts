import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SessionTable } from '../../src/proxy/session-table.js';

test('the count bound forgets the least recently used session, touched twice in a row or not', () => {
  let now = 0;
  const t = new SessionTable(2, 60_000, 16, () => now);
  t.create('a', true);
  t.create('b', true);
  // a touched (moved last), then again (already last): b is the oldest.
  assert.ok(t.get('a'));
  assert.ok(t.get('a'));
  t.create('c', true);
  assert.equal(t.get('b'), undefined);
  assert.ok(t.get('a'));
  assert.equal(t.forgotten, 1);
  // c touched after a: a is the oldest now.
  now++;
  assert.ok(t.get('c'));
  t.create('d', true);
  assert.equal(t.get('a'), undefined);
  assert.ok(t.get('c'));
  assert.ok(t.get('d'));
});

test('a session deleted and made again is a new one, and takes its place as the newest', () => {
  const t = new SessionTable(2, 60_000, 16);
  const a = t.create('a', true);
  t.delete('a');
  assert.equal(t.get('a'), undefined);
  const again = t.create('a', true);
  assert.notEqual(again, a);
  t.create('b', true);
  assert.equal(t.get('a'), again);
  // a touched last: b goes first.
  t.create('c', true);
  assert.equal(t.get('b'), undefined);
  assert.equal(t.get('a'), again);
});

test('a session idle past the TTL is forgotten when next asked for', () => {
  let now = 0;
  const t = new SessionTable(10, 1_000, 16, () => now);
  t.create('a', true);
  now = 999;
  assert.ok(t.get('a'));
  now = 2_000;
  assert.equal(t.get('a'), undefined);
  assert.equal(t.forgotten, 1);
});
