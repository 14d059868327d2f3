/**
 * The stateless arm: requests correlated across client and server by trace and request id, a
 * re-issue to its original by method, tool and argument digest within the window.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { SpanRecord } from '../../src/model/span-record.js';
import { StatelessCallScript, cutAndReissue } from '../fixtures/scenarios/stateless-calls.js';
import { statelessScenario } from '../fixtures/scenarios/scenarios.js';
import { harness } from './harness.js';

const WINDOW = 10_000;
const REISSUE = 30_000;

function run(spans: SpanRecord[], advanceMs = REISSUE + WINDOW) {
  const h = harness();
  h.ingest(spans);
  h.advance(advanceMs);
  return h;
}

describe('stateless transport: orphaned requests, duplicate executions, work after cancel', { timeout: 10_000 }, () => {
  it('a cut mid-call, re-issued, that the server did not stop: duplicate_execution (and its late work), never a fork', () => {
    const { original, reissue } = cutAndReissue({ serverStopsFirst: false });
    const h = run([...original.spans, ...reissue.spans]);
    assert.deepEqual(h.kinds(), ['duplicate_execution', 'work_after_cancel']);
    const dup = h.findings.find((f) => f.kind === 'duplicate_execution')!;
    assert.equal(dup.requestId, '1');
    assert.equal(dup.service, 'mcp-server');
    assert.match(dup.summary, /re-issued as request 2, but the server completed both/);
    assert.match(dup.summary, /docs\/runbook\.md#mcpduplicatetoolexecution/);
    assert.equal(dup.evidence.length, 5);
    assert.deepEqual(h.resumes, []);
  });

  it('the same cut where the server cancelled the first on close: nothing', () => {
    const { original, reissue } = cutAndReissue({ serverStopsFirst: true });
    assert.deepEqual(run([...original.spans, ...reissue.spans]).findings, []);
  });

  it('a cut without a re-issue: orphaned_request, decided once the re-issue window has passed', () => {
    const { original } = cutAndReissue({ serverStopsFirst: true });
    const h = harness();
    h.ingest(original.spans);
    h.advance(REISSUE - 1);
    assert.equal(h.findings.length, 0, 'a re-issue may still come');
    h.advance(1);
    assert.deepEqual(h.kinds(), ['orphaned_request']);
    assert.match(h.findings[0]!.summary, /neither answered nor re-issued within 30 s/);
  });

  it('client spans alone: orphaned_request on stream_broken; nothing on a re-issue', () => {
    const { original, reissue } = cutAndReissue({ serverStopsFirst: false });
    assert.deepEqual(run(original.client()).kinds(), ['orphaned_request']);
    assert.deepEqual(run([...original.client(), ...reissue.client()]).findings, []);
  });

  it('server spans alone: the duplicate is still found (re-issue read within the window of the first)', () => {
    const { original, reissue } = cutAndReissue({ serverStopsFirst: false });
    assert.deepEqual(run([...original.server(), ...reissue.server()]).kinds(), ['duplicate_execution', 'work_after_cancel']);
  });

  it('a re-issue after the window is no re-issue: the first is orphaned, no duplicate', () => {
    const original = new StatelessCallScript('1').sent(0).received(1).handled(1, 5_000, 'completed', { streamClosed: true }).settled(2_000, 'stream_broken');
    const late = new StatelessCallScript('2').sent(2_000 + REISSUE + 1).received(2_000 + REISSUE + 2).handled(2_000 + REISSUE + 2, 100, 'completed');
    assert.deepEqual(run([...original.spans, ...late.spans]).kinds(), ['orphaned_request']);
  });

  it('healthy traffic: the same call twice, both answered: nothing', () => {
    const a = new StatelessCallScript('1').sent(0).received(1).handled(1, 100, 'completed').settled(102, 'answered');
    const b = new StatelessCallScript('2').sent(500).received(501).handled(501, 100, 'completed').settled(602, 'answered');
    assert.deepEqual(run([...a.spans, ...b.spans]).findings, []);
  });

  it('an ordinary retry of a failed call: nothing', () => {
    const a = new StatelessCallScript('1').sent(0).received(1).handled(1, 100, 'error').settled(102, 'error');
    const b = new StatelessCallScript('2').sent(500).received(501).handled(501, 100, 'completed').settled(602, 'answered');
    assert.deepEqual(run([...a.spans, ...b.spans]).findings, []);
  });

  it('a connection refused before any stream (transport_error, no server span) is no orphan', () => {
    const a = new StatelessCallScript('1').sent(0).settled(3, 'transport_error');
    assert.deepEqual(run(a.spans).findings, []);
  });

  it('another call (other arguments) after a cut is no re-issue; another client is no re-issue either', () => {
    const original = new StatelessCallScript('1').sent(0).received(1).handled(1, 5_000, 'completed', { streamClosed: true }).settled(2_000, 'stream_broken');
    const other = new StatelessCallScript('2', { digest: 'd1gest0000000002' }).sent(2_100).received(2_101).handled(2_101, 100, 'completed').settled(2_300, 'answered');
    const elsewhere = new StatelessCallScript('1', { client: 'other-client' }).sent(2_100).received(2_101).handled(2_101, 100, 'completed').settled(2_300, 'answered');
    assert.deepEqual(run([...original.spans, ...other.spans, ...elsewhere.spans]).kinds(), ['orphaned_request']);
  });

  it('an SDK 1.x client that waited to its timeout, the server saying the stream closed first: orphaned_request', () => {
    // A 1.x stateless transport reports the close without a handler outcome (it does not see the handler).
    const c = new StatelessCallScript('1').sent(0).received(1).handled(1, 300, '', { streamClosed: true }).settled(2_000, 'timeout');
    assert.deepEqual(run(c.spans).kinds(), ['orphaned_request']);
  });

  it('2026-07-28: the server alone saw the stream close (the revision\'s cancel): no orphan; the client\'s break or an older revision: orphan', () => {
    // Closing the stream is the cancel on 2026-07-28: an app's abort and a cut are the same bytes to the server.
    const modern = new StatelessCallScript('1').received(1).handled(1, 300, 'cancelled', { streamClosed: true, protocolVersion: '2026-07-28' });
    assert.deepEqual(run(modern.spans).findings, []);
    const later = new StatelessCallScript('1').received(1).handled(1, 300, 'cancelled', { streamClosed: true, protocolVersion: '2027-01-15' });
    assert.deepEqual(run(later.spans).findings, []);
    // The instrumented client says its stream broke while it waited: the same server spans are an orphan.
    const told = new StatelessCallScript('1').sent(0).received(1).handled(1, 300, 'cancelled', { streamClosed: true, protocolVersion: '2026-07-28' }).settled(400, 'stream_broken');
    assert.deepEqual(run(told.spans).kinds(), ['orphaned_request']);
    // 2025 revisions cancel with notifications/cancelled: a bare close is still a loss.
    const older = new StatelessCallScript('1').received(1).handled(1, 300, 'cancelled', { streamClosed: true, protocolVersion: '2025-11-25' });
    assert.deepEqual(run(older.spans).kinds(), ['orphaned_request']);
    const unnamed = new StatelessCallScript('1').received(1).handled(1, 300, 'cancelled', { streamClosed: true, protocolVersion: 'draft' });
    assert.deepEqual(run(unnamed.spans).kinds(), ['orphaned_request']);
    // A re-issue after the close still makes it a loss the server executed twice.
    const first = new StatelessCallScript('1').received(1).handled(1, 5_000, 'completed', { streamClosed: true, protocolVersion: '2026-07-28' });
    const again = new StatelessCallScript('2').received(2_101).handled(2_101, 100, 'completed', { protocolVersion: '2026-07-28' });
    assert.deepEqual(run([...first.spans, ...again.spans]).kinds(), ['duplicate_execution']);
  });

  it('a timeout whose stream the server kept open (a slow call, not a broken one): nothing', () => {
    const c = new StatelessCallScript('1').sent(0).received(1).handled(1, 5_000, 'completed').settled(2_000, 'timeout');
    assert.deepEqual(run(c.spans).findings, []);
  });

  it('the stateless scenario with a replay-like id pattern stays free of fork findings', () => {
    const s = statelessScenario();
    assert.deepEqual(run([...s.server, ...s.client]).findings, []);
  });

  it('each finding once, whatever the arrival order and however often decided', () => {
    const { original, reissue } = cutAndReissue({ serverStopsFirst: false });
    const all = [...original.spans, ...reissue.spans];
    const h = harness();
    for (const s of [...all].reverse()) {
      h.ingest([s]);
      h.advance(100);
    }
    h.ingest(all);
    h.advance(REISSUE + WINDOW);
    h.engine.decideAll();
    assert.deepEqual(h.kinds(), ['duplicate_execution', 'work_after_cancel']);
  });
});
