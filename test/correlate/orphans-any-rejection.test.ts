/**
 * A pending request is orphaned by any rejected resume, not only 404/410, and the client's spans
 * alone are enough when the server is not instrumented (server-everything answers 400).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { clientOnlyRejectedScenario, healthyResumeScenario } from '../fixtures/scenarios/scenarios.js';
import { harness } from './harness.js';

describe('orphans wherever a call hangs', { timeout: 10_000 }, () => {
  for (const [status, outcome] of [
    [400, 'rejected_other'],
    [500, 'rejected_other'],
    [404, 'rejected_404'],
    [409, 'rejected_gap'],
  ] as const) {
    it(`a ${status} on resume orphans the pending call; client spans alone; resume counted ${outcome}`, () => {
      const h = harness();
      h.ingest(clientOnlyRejectedScenario({ status, outcome: undefined }).client);
      h.advance(10_000);
      assert.deepEqual(h.kinds(), ['orphaned_progress_token']);
      const f = h.findings[0]!;
      assert.equal(f.requestId, '1');
      assert.equal(f.progressToken, '1');
      assert.equal(f.service, 'mcp-client');
      assert.match(f.summary, new RegExp(`rejected with ${status}`));
      assert.ok(f.evidence.some((e) => e.spanName === 'forkwatch.resume' && e.shows.includes(String(status))));
      assert.deepEqual(h.resumes.map((r) => r.outcome), [outcome]);
    });
  }

  it('the same call settled by its timeout before the decision is reported already resolved', () => {
    const h = harness();
    h.ingest(clientOnlyRejectedScenario({ status: 400, outcome: 'timeout' }).client);
    h.advance(10_000);
    assert.deepEqual(h.kinds(), ['orphaned_progress_token']);
    assert.ok(h.findings[0]!.resolvedAtMs !== undefined);
  });

  it('answered after all (a later resume replayed it): nothing', () => {
    const h = harness();
    h.ingest(clientOnlyRejectedScenario({ status: 500, outcome: 'answered' }).client);
    h.advance(10_000);
    assert.deepEqual(h.findings, []);
  });

  it('a 2xx resume orphans nothing', () => {
    const h = harness();
    const s = healthyResumeScenario();
    h.ingest(s.client);
    h.advance(10_000);
    assert.deepEqual(h.findings, []);
    assert.deepEqual(h.resumes.map((r) => r.outcome), ['resumed']);
  });
});
