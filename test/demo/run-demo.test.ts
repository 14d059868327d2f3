import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runDemo } from '../../src/demo/run-demo.js';

test('the demo forks against the naive server and not against the guarded one', { timeout: 15_000 }, async () => {
  const lines: string[] = [];
  const { naive, guarded } = await runDemo({ print: (l) => lines.push(l), overrides: { requestTimeoutMs: 1000 } });
  assert.ok(naive.sessions.rehydrated >= 1);
  assert.ok(naive.lostResults.some((l) => l.onWire));
  assert.equal(guarded.sessions.rehydrated, 0);
  assert.equal(guarded.resultsReceived, 1);
  const text = lines.join('\n');
  assert.match(text, /REHYDRATED/);
  assert.match(text, /FORK: the server rehydrated/);
  assert.match(text, /session_not_found/);
});
