/**
 * SPEC: "A call its own app cancelled, or that its client saw fail, is never an orphan." The
 * sessionful rule reads the client's own settle: only waiting to the timeout is the hang; the
 * stateless rule shares the cancel reading (analyze/client-settle.ts).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SessionScript, inc } from '../fixtures/scenarios/scenarios.js';
import { ATTR_JSONRPC_REQUEST_ID, ATTR_REQUEST_OUTCOME, ATTR_SESSION_INCARNATION, SPAN_REQUEST_SETTLED } from '@forkwatch/instrumentation/semconv';
import { StatelessCallScript } from '../fixtures/scenarios/stateless-calls.js';
import { sessionKeyOf } from '../fixtures/scenarios/span-factory.js';
import { harness } from './harness.js';

/**
 * Client spans only (an uninstrumented server, server-everything's 400): call 1 (token 1) is
 * pending when a resume is rejected 400; the app's retry, call 2 (token 2), goes out as the
 * rejection comes back and its POST is rejected 400 too: settled `retryOutcome` within 15 ms.
 * Call 1 settles `firstOutcome` (a timeout by default) a minute later.
 */
function rejectedResumeThenRetry(o: { retryOutcome: string; firstOutcome?: string }): ReturnType<typeof harness> {
  const s = new SessionScript({ key: sessionKeyOf(`retry-${o.retryOutcome}-${o.firstOutcome ?? 'timeout'}`) });
  s.sent(0, '0', 'initialize').settled(5, '0', 'initialize', 'answered');
  s.sent(100, '1', 'tools/call', { tool: 'slow', token: '1' });
  s.clientResume(46_000, 'e4', 400);
  s.sent(46_000, '2', 'tools/call', { tool: 'slow', token: '2' }).settled(46_015, '2', 'tools/call', o.retryOutcome, '2');
  s.settled(106_000, '1', 'tools/call', o.firstOutcome ?? 'timeout', '1');
  const h = harness();
  h.ingest(s.client);
  h.advance(10_000);
  return h;
}

describe('a call the client saw fail, or its app cancelled, is never an orphan', { timeout: 10_000 }, () => {
  for (const outcome of ['transport_error', 'error', 'failed_fork']) {
    it(`sessionful: the retry settled '${outcome}' within 15 ms is no orphan; the call that waited to its timeout still is`, () => {
      const h = rejectedResumeThenRetry({ retryOutcome: outcome });
      assert.deepEqual(h.findings.map((f) => [f.kind, f.requestId]), [['orphaned_progress_token', '1']]);
    });
  }

  it('sessionful: the pending call its app cancelled after the rejection is no orphan', () => {
    const h = rejectedResumeThenRetry({ retryOutcome: 'transport_error', firstOutcome: 'cancelled' });
    assert.deepEqual(h.findings, []);
  });

  it('stateless: a call the app cancelled is no orphaned_request, even where the server saw its stream close', () => {
    const c = new StatelessCallScript('1').sent(0).received(1).handled(1, 500, 'cancelled', { streamClosed: true }).settled(400, 'cancelled');
    const h = harness();
    h.ingest(c.spans);
    h.advance(40_000);
    assert.deepEqual(h.findings, []);
  });

  /**
   * Server spans only (in-process server, stock client): call 1 is received and left unanswered,
   * the client's `notifications/cancelled` for it reaches the server at `cancelAt` (the server's
   * own settle, `cancelled`), the transport closes at 5000.
   */
  function serverOnlyCancel(cancelAt: number | undefined): ReturnType<typeof harness> {
    const i = inc(`server-cancel-${cancelAt}`);
    const s = new SessionScript({ key: sessionKeyOf(`server-cancel-${cancelAt}`) });
    s.created(0, i, 'initialize');
    s.received(100, '1', 'tools/call', i, { tool: 'slow', token: '1' });
    if (cancelAt !== undefined)
      s.server.push(s.f.span('server', SPAN_REQUEST_SETTLED, cancelAt, { [ATTR_JSONRPC_REQUEST_ID]: '1', [ATTR_REQUEST_OUTCOME]: 'cancelled', [ATTR_SESSION_INCARNATION]: i }));
    s.ended(5000, i, 'transport_closed');
    const h = harness();
    h.ingest(s.server);
    h.advance(10_000);
    return h;
  }

  it('sessionful, server spans only: a call the client cancelled on the wire before the session ended is no orphan', () => {
    assert.deepEqual(serverOnlyCancel(1200).findings, []);
  });

  it('sessionful, server spans only: without the cancel, or with it after the end, the end still orphans the call', () => {
    assert.deepEqual(serverOnlyCancel(undefined).findings.map((f) => [f.kind, f.requestId]), [['orphaned_progress_token', '1']]);
    assert.deepEqual(serverOnlyCancel(6000).findings.map((f) => [f.kind, f.requestId]), [['orphaned_progress_token', '1']]);
  });
});
