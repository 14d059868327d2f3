/**
 * `npm run bench -- fleet` at its smallest (bench/fleet/): 60 bulk calls per app, one seed-scenario
 * stream break and one fork, through the real Collector on collector/otel/gateway.yaml into two
 * `forkwatch serve` replicas. Every fork the server reports is found, no finding is false, and each
 * part's CPU and the spans were measured. About 40 s on a loaded 2-core machine.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runFleet } from '../../bench/fleet/run-fleet.js';
import { fleetTable } from '../../bench/fleet/fleet-table.js';
import { otelcolUnavailable } from './helpers/otelcol.js';

test('a tiny fleet through the gateway: the fork found, no false finding, every part measured', { skip: otelcolUnavailable(), timeout: 240_000 }, async (t) => {
  const r = await runFleet({ calls: 60, concurrency: 4, breaks: 1, forks: 1, seed: 1 });
  const table = fleetTable(r).join('\n');
  t.diagnostic(table);
  assert.equal(r.instrumented.bulkCalls, 60, table);
  assert.equal(r.plain.bulkCalls, 60, table);
  assert.deepEqual(r.score.offPlan, [], 'the break resumed healthily and the fork forked, by the servers\' account');
  assert.equal(r.score.forks, 1, table);
  assert.equal(r.score.found, 1, table);
  // KNOWN (issue 28's fleet run, 2026-12-05): a long call answered and its session DELETEd ~50 ms
  // later can raise a false orphaned_progress_token (the server's answer event never exported, the
  // client's settle arriving after the decision) that the settle resolves ~100 ms later. The bench
  // counts it false; here only a false finding left standing fails.
  assert.deepEqual(r.score.falseFindings.filter((f) => f.resolvedAtMs === undefined).map((f) => `${f.kind} ${f.service}`), [], table);
  const received = r.spans.detectors[0] + r.spans.detectors[1];
  assert.ok(received > 0 && received === r.spans.collectorAccepted, `the detectors received what the Collector accepted: ${table}`);
  assert.ok(r.spans.detectors[0] > 0 && r.spans.detectors[1] > 0, `both replicas took sessions: ${table}`);
  for (const [k, v] of Object.entries({ instrumented: r.cpu.instrumented, plain: r.cpu.plain, proxy: r.cpu.proxy, collector: r.cpu.collector, d0: r.cpu.detectors[0], d1: r.cpu.detectors[1] })) assert.ok(v > 0, `${k} CPU measured: ${v}`);
});
