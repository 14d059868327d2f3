import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SPAN_REQUEST_SETTLED } from '../../packages/instrumentation/src/semconv.js';
import { SessionScript, guarded404Scenario, healthyResumeScenario, inc, seedScenario } from '../fixtures/scenarios/scenarios.js';
import type { EventSpec } from '../fixtures/scenarios/scenarios.js';
import { sessionKeyOf } from '../fixtures/scenarios/span-factory.js';
import { harness } from './harness.js';

const WINDOW = 10_000;

describe('CorrelationEngine: edge cases', { timeout: 10_000 }, () => {
  it('a replay overlapping what the client had (same payload, dropped as duplicate) is not a loss', () => {
    const s = new SessionScript({ key: sessionKeyOf('overlap'), guarded: true }, 'server');
    const A = inc('ovA');
    const e = (n: number): EventSpec => ({ id: `${A}-${n}`, seq: n, kind: 'notification', method: 'notifications/message', data: `m${n}` });
    s.created(0, A, 'initialize', { source: 'server' });
    for (let i = 1; i <= 4; i++) s.both(i * 10, A, e(i), A);
    s.clientResume(1_000, `${A}-3`, 200, { inc: A, previousInc: A }).serverResume(1_001, `${A}-3`, 200, { inc: A, found: true });
    s.serverEvent(1_002, A, e(4), { replayed: true }).clientEvent(1_010, A, e(4), { delivery: 'dropped', seenBefore: true });
    s.both(1_020, A, e(5), A);
    const h = harness();
    h.ingest([...s.client, ...s.server]);
    h.advance(WINDOW);
    assert.deepEqual(h.findings, []);
    assert.deepEqual(h.resumes.map((r) => r.outcome), ['resumed']);
  });

  it('a 404 the SDK ignores (request never settled) leaves an orphaned token but no fork', () => {
    const { old } = guarded404Scenario({ sessionId: 'sdk-404' });
    const spans = [...old.server, ...old.client].filter((x) => x.name !== SPAN_REQUEST_SETTLED || x.attributes['jsonrpc.request.id'] !== '1');
    const h = harness();
    h.ingest(spans);
    h.advance(WINDOW);
    assert.deepEqual(h.kinds(), ['orphaned_progress_token']);
    assert.match(h.findings[0]!.summary, /rejected with 404|ended incarnation/);
    assert.deepEqual(h.resumes.map((r) => r.outcome), ['rejected_404']);
  });

  it('a compacted session restored after a restart continues without duplicate findings', () => {
    const a = harness();
    const s = seedScenario({ sessionId: 'compact-restore' });
    a.ingest(s.server);
    a.advance(WINDOW);
    a.advance(70_000); // compacted
    const saved = a.engine.takeDirty();
    const state = saved.find((x) => x.key === s.key)!.state!;
    assert.ok(state.length < 2048, `compact state is small (${state.length} B)`);
    const b = harness({}, a.now());
    b.engine.restore(s.key!, state);
    assert.equal(b.engine.stats().orphanedByService.get('mcp-server'), 1);
    b.ingest(s.server);
    b.advance(WINDOW);
    assert.deepEqual(b.findings, []);
    assert.equal(b.engine.lineage(s.key!)!.findingIds.length, 2);
  });

  it('healthy sessions decided repeatedly as spans trickle in never yield a finding', () => {
    const h = harness();
    const s = healthyResumeScenario({ sessionId: 'trickle' });
    const all = [...s.server, ...s.client].sort((x, y) => x.startMs - y.startMs);
    for (const span of all) {
      h.ingest([span]);
      h.advance(4_000);
    }
    h.advance(WINDOW);
    assert.deepEqual(h.findings, []);
    assert.deepEqual(h.resumes.map((r) => r.outcome), ['resumed']);
  });

  it('ignores spans without a side and spans it cannot use, without throwing', () => {
    const h = harness();
    const s = seedScenario();
    const broken = s.server.map((x) => ({ ...x, attributes: { ...x.attributes, 'forkwatch.side': 'proxy' } }));
    h.ingest(broken);
    h.ingest([{ ...s.server[0]!, name: 'forkwatch.unknown' }, null as never]);
    h.advance(WINDOW);
    assert.deepEqual(h.findings, []);
  });

  it('exposes lineage with incarnations, events, resumes and requests', () => {
    const h = harness();
    const s = seedScenario();
    h.ingest([...s.server, ...s.client]);
    h.advance(WINDOW);
    const l = h.engine.lineage(s.key!)!;
    assert.equal(l.service, 'mcp-server');
    assert.equal(l.clientService, 'mcp-client');
    assert.deepEqual(l.incarnations.map((i) => i.createdBy), ['initialize', 'GET']);
    assert.equal(l.incarnations[0]!.ended?.reason, 'reaped_idle');
    assert.equal(l.resumes.length, 2);
    assert.equal(l.requests.find((r) => r.requestId === '3')?.state, 'orphaned');
    assert.equal(l.findingIds.length, 4);
    assert.equal(h.engine.lineage('nope'), undefined);
  });
});

describe('CorrelationEngine: compaction keeps what a later span can still need', { timeout: 10_000 }, () => {
  it('a request waiting across compaction is orphaned when the server later reaps its incarnation', () => {
    const s = new SessionScript({ key: sessionKeyOf('long'), guarded: true }, 'server');
    const A = inc('longA');
    s.created(0, A, 'initialize', { source: 'server' }).sent(10, '1', 'tools/call', { token: '1', tool: 'slow', inc: A });
    s.received(11, '1', 'tools/call', A, { token: '1', tool: 'slow' });
    const first = [...s.server, ...s.client];
    s.ended(200_000, A, 'reaped_idle');
    const later = s.server.slice(-1);
    const h = harness();
    h.ingest(first);
    h.advance(WINDOW);
    h.advance(70_000); // idle: compacted
    assert.equal(h.engine.stats().events, 0);
    assert.equal(h.engine.stats().pendingRequests, 1);
    assert.equal(h.findings.length, 0);
    h.ingest(later);
    h.advance(WINDOW);
    assert.deepEqual(h.kinds(), ['orphaned_progress_token']);
    assert.match(h.findings[0]!.summary, /tools\/call \(slow\) request 1 with progressToken 1 will never be answered: the server ended incarnation/);
  });
});

describe('CorrelationEngine: observed incarnations stay server-side', { timeout: 10_000 }, () => {
  it('a client request received by a naive server in another observed incarnation is not incarnation_changed', () => {
    const s = new SessionScript({ key: sessionKeyOf('obs') }, 'counter');
    const A = inc('obsA');
    const B = inc('obsB');
    s.created(0, A, 'initialize').sent(10, '1', 'tools/list').received(11, '1', 'tools/list', A);
    s.settled(20, '1', 'tools/list', 'answered');
    // A POST on the reaped id was rehydrated: a server-side fork, which the client cannot see.
    s.created(30_000, B, 'tools/list', { clientSupplied: true }).sent(30_010, '2', 'tools/list').received(30_011, '2', 'tools/list', B);
    s.settled(30_020, '2', 'tools/list', 'answered');
    const h = harness();
    h.ingest([...s.server, ...s.client]);
    h.advance(WINDOW);
    assert.deepEqual(h.kinds(), ['minted_on_resume']);
  });
});
