import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Finding } from '../../src/model/finding.js';
import { scoreFleet } from '../../bench/fleet/score-fleet.js';
import { fleetOptionsFromEnv, sumMetric } from '../../bench/fleet/run-fleet.js';
import { planSeedRuns, type FleetAppResult } from '../../bench/fleet/fleet-mix.js';

const app = (runs: Array<[string, 'break' | 'fork', boolean]>): FleetAppResult => ({
  mode: 'instrumented',
  bulkCalls: 10,
  bulkFailed: 0,
  longCalls: 1,
  progress: 5,
  sessions: 2,
  seedRuns: runs.map(([service, injected, forked]) => ({ service, injected, forked, calls: 2, resumes: 1 })),
});
const finding = (service: string, kind = 'minted_on_resume'): Finding => ({ service, kind, sessionKey: 'k', id: `${service}-${kind}`, summary: 's' }) as unknown as Finding;

test('scoreFleet: a fork is found by a finding on its run, labelled by the server (forked), not the plan', () => {
  const a = app([
    ['fleet-seed0-fork', 'fork', true],
    ['fleet-seed1-fork', 'fork', true],
    ['fleet-seed2-break', 'break', false],
    ['fleet-seed3-fork', 'fork', false],
  ]);
  const s = scoreFleet(a, [finding('fleet-seed0-fork-server'), finding('fleet-seed0-fork-client', 'dedup_loss'), finding('fleet-seed2-break-server'), finding('fleet-proxy')]);
  assert.equal(s.forks, 2);
  assert.equal(s.found, 1);
  assert.deepEqual(s.missed, ['fleet-seed1-fork']);
  assert.deepEqual(s.falseFindings.map((f) => f.service), ['fleet-seed2-break-server', 'fleet-proxy']);
  assert.deepEqual(s.offPlan, ['fleet-seed3-fork: did not fork']);
  assert.deepEqual(s.kinds, { minted_on_resume: 1, dedup_loss: 1 });
});

test('scoreFleet: seed10 is not seed1 (service prefixes end at a dash)', () => {
  const s = scoreFleet(app([['fleet-seed1-fork', 'fork', true]]), [finding('fleet-seed10-fork-server')]);
  assert.equal(s.found, 0);
  assert.equal(s.falseFindings.length, 1);
});

test('fleetOptionsFromEnv: defaults, 1 % breaks, and a clear error on bad input', () => {
  assert.deepEqual(fleetOptionsFromEnv({}), { calls: 1000, concurrency: 8, breaks: 10, forks: 3, seed: 1 });
  assert.equal(fleetOptionsFromEnv({ FLEET_CALLS: '5000' }).breaks, 50);
  assert.throws(() => fleetOptionsFromEnv({ FLEET_CALLS: '1e3x' }), /FLEET_CALLS: an integer >= 1/);
  assert.throws(() => fleetOptionsFromEnv({ FLEET_FORKS: '-1' }), /FLEET_FORKS/);
  assert.equal(fleetOptionsFromEnv({ FLEET_LONG_SHARE: '0.25' }).longShare, 0.25);
  assert.throws(() => fleetOptionsFromEnv({ FLEET_LONG_SHARE: '2' }), /FLEET_LONG_SHARE: a number from 0 to 1/);
});

test('sumMetric sums every label set of a counter, and planSeedRuns keeps the counts', () => {
  assert.equal(sumMetric('a_total{x="1"} 3\na_total{x="2"} 4\nab_total 100\na_total 1\n', 'a_total'), 8);
  const plan = planSeedRuns(10, 3, 1);
  assert.equal(plan.filter((k) => k === 'fork').length, 3);
  assert.equal(plan.length, 13);
  assert.deepEqual(plan, planSeedRuns(10, 3, 1));
});
