import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as turn } from 'node:timers/promises';
import { IngestTurns } from '../../src/otlp/ingest-turns.js';

test('IngestTurns runs queued work in order, one piece per turn of the event loop', async () => {
  const turns = new IngestTurns();
  const ran: string[] = [];
  turns.run(() => ran.push('a'));
  turns.run(() => ran.push('b'));
  turns.run(() => ran.push('c'));
  assert.equal(ran.length, 0, 'nothing runs synchronously');
  assert.equal(turns.waiting, 3);
  // Something queued now, between two pieces of work, runs before the next one.
  await turn();
  ran.push('other');
  await turn();
  await turn();
  await turn();
  assert.deepEqual(ran, ['a', 'other', 'b', 'c']);
  assert.equal(turns.waiting, 0);
  assert.equal(turns.completed, 3);
});
