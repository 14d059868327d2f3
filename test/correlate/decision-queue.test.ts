import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DecisionQueue } from '../../src/correlate/decision-queue.js';

const never = (): boolean => false;

function scan(q: DecisionQueue, now: number, since: Record<string, number>): string[] {
  const decided: string[] = [];
  q.scan(now, 10, (k) => since[k], (k) => {
    decided.push(k);
    q.delete(k);
  }, never);
  return decided;
}

test('in order: decides the due keys oldest first and stops at the first one not due', () => {
  const q = new DecisionQueue();
  const since = { a: 0, b: 5, c: 20 };
  for (const [k, t] of Object.entries(since)) q.add(k, t);
  assert.deepEqual(scan(q, 15, since), ['a', 'b']);
  assert.deepEqual(q.snapshot(), ['c']);
});

test('out of order (a restore): every key is looked at; a requeued key moves to the back', () => {
  const q = new DecisionQueue();
  const since: Record<string, number> = { late: 20, early: 0 };
  q.add('late', 20);
  q.add('early', 0);
  assert.deepEqual(scan(q, 15, since), ['early'], 'found behind a key not yet due');
  q.add('x', 25);
  since.x = 25;
  since.late = 30;
  q.requeue('late', 30);
  assert.deepEqual(q.snapshot(), ['x', 'late']);
  assert.deepEqual(scan(q, 36, since), ['x']);
});

test('a key whose session is gone is dropped; over() stops the scan', () => {
  const q = new DecisionQueue();
  q.add('gone', 0);
  q.add('due', 1);
  const decided: string[] = [];
  assert.equal(q.scan(100, 10, (k) => (k === 'gone' ? undefined : 1), (k) => decided.push(k), () => true), false);
  assert.equal(decided.length, 0);
  q.scan(100, 10, (k) => (k === 'gone' ? undefined : 1), (k) => decided.push(k), never);
  assert.deepEqual(decided, ['due']);
  assert.equal(q.has('gone'), false);
});
