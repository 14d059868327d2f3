import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { formatStalls, loopStalls } from '../../bench/loop-stalls.js';

test('loop stalls between two scrapes of prom-client process metrics: the loop held, the collector paused', async () => {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 5 });
  await sleep(50);
  const first = await registry.metrics();
  // Young garbage for the scavenger, then the loop held for 120 ms by a callback of its own (the
  // monitor's timer does not see a block in the callback that read its previous sample).
  let keep: unknown[] = [];
  for (let i = 0; i < 2_000_000; i++) keep.push({ i });
  keep = [];
  setTimeout(() => {
    const until = performance.now() + 120;
    while (performance.now() < until);
  }, 10);
  await sleep(200);
  const s = loopStalls(first, await registry.metrics());
  assert.ok(s.loopMaxMs >= 100 && s.loopMaxMs < 1000, `loop delay max ${s.loopMaxMs} ms`);
  const minor = s.gc.get('minor');
  assert.ok(minor !== undefined && minor.count > 0 && minor.totalMs > 0, 'scavenges counted');
  assert.ok(minor.longestBelowMs >= 1, 'the longest pause is bounded by a bucket');
  assert.match(formatStalls(s), /^loop delay max \d+ ms \(p99 [\d.]+ ms\); GC .*minor \d+ \(\d+ ms, each < \d+ ms\)/);
  // Nothing between two scrapes: no pause counted, a short delay.
  const a = await registry.metrics();
  const quiet = loopStalls(a, a);
  assert.equal(quiet.gc.size, 0);
  assert.match(formatStalls(quiet), /GC none$/);
  registry.clear();
});
