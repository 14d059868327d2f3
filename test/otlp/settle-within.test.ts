import { test } from 'node:test';
import assert from 'node:assert/strict';
import { settleWithin } from '../../src/otlp/settle-within.js';

function watch(p: Promise<void>, ms: number): Promise<string[]> {
  const calls: string[] = [];
  return new Promise((resolve) => {
    settleWithin(
      p,
      ms,
      () => calls.push('resolved'),
      (err) => calls.push(`failed: ${(err as Error).message}`),
    );
    // Long after either outcome could have come (a second call would show here too).
    setTimeout(() => resolve(calls), ms + 200);
  });
}

test('settleWithin: one call, for the promise or for the deadline, whichever comes first', async () => {
  assert.deepEqual(await watch(Promise.resolve(), 50), ['resolved']);
  assert.deepEqual(await watch(Promise.reject(new Error('queue closed')), 50), ['failed: queue closed']);
  assert.deepEqual(await watch(new Promise<void>(() => {}), 50), ['failed: ingest sink did not settle within 50 ms']);
  // Settling after the deadline changes nothing.
  const late = new Promise<void>((r) => setTimeout(r, 120));
  assert.deepEqual(await watch(late, 50), ['failed: ingest sink did not settle within 50 ms']);
});
