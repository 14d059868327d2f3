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
  // Resolved or not: a false page is one page too many (a long call answered then DELETEd was one,
  // test/instrumentation/server/answered-then-closed.test.ts).
  assert.deepEqual(r.score.falseFindings.map((f) => `${f.kind} ${f.service}${f.resolvedAtMs !== undefined ? ' (resolved)' : ''}`), [], table);
  const received = r.spans.detectors[0] + r.spans.detectors[1];
  assert.ok(received > 0 && received === r.spans.collectorAccepted, `the detectors received what the Collector accepted: ${table}`);
  assert.ok(r.spans.detectors[0] > 0 && r.spans.detectors[1] > 0, `both replicas took sessions: ${table}`);
  for (const [k, v] of Object.entries({ instrumented: r.cpu.instrumented, plain: r.cpu.plain, proxy: r.cpu.proxy, collector: r.cpu.collector, d0: r.cpu.detectors[0], d1: r.cpu.detectors[1] })) assert.ok(v > 0, `${k} CPU measured: ${v}`);
});
