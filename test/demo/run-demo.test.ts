import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runDemo } from '../../src/demo/run-demo.js';

// Three times the scenario's timers: in a cold process on a loaded 2-core machine the client's
// first initialize takes over a second, the naive server's reaper (300 ms x scale) takes the
// session before the call starts, and the run tells another story (the result never reaches the
// wire). At 2x, 3 copies side by side at load 15 failed 7 of 9; at 3x they passed 9 of 9.
const SCALE = 3;

test('the demo forks against the naive server and not against the guarded one', { timeout: 60_000 }, async () => {
  const lines: string[] = [];
  const { naive, guarded } = await runDemo({ print: (l) => lines.push(l), scale: SCALE });
  const text = lines.join('\n');
  const why = `the demo's narration:\n${text}\nlost results: ${JSON.stringify(naive.lostResults)}`;
  assert.ok(naive.sessions.rehydrated >= 1, why);
  assert.ok(naive.lostResults.some((l) => l.onWire), why);
  assert.equal(guarded.sessions.rehydrated, 0, why);
  assert.equal(guarded.resultsReceived, 1, why);
  assert.match(text, /REHYDRATED/);
  assert.match(text, /FORK: the server rehydrated/);
  assert.match(text, /session_not_found/);
});
