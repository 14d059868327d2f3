import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CorrelationEngine } from '../../src/correlate/correlation-engine.js';
import type { Finding } from '../../src/model/finding.js';
import {
  gap409Scenario,
  guarded404Scenario,
  healthyResumeScenario,
  reuseAcrossReaperScenario,
  seedScenario,
  statelessScenario,
} from '../fixtures/scenarios/scenarios.js';
import { SavedStates, harness, shuffled } from './harness.js';

const WINDOW = 10_000;
const SEED_BOTH = ['dedup_loss', 'minted_on_resume', 'orphaned_progress_token', 'sequence_regression'];

describe('CorrelationEngine: the seed', { timeout: 10_000 }, () => {
  it('both sides: minted_on_resume, sequence_regression, dedup_loss, orphaned token; one forked resume', () => {
    const h = harness();
    const s = seedScenario();
    h.ingest([...s.server, ...s.client]);
    h.advance(WINDOW - 1);
    assert.equal(h.findings.length, 0, 'nothing decided before the window elapsed');
    h.advance(1);
    assert.deepEqual(h.kinds(), SEED_BOTH);
    assert.equal(new Set(h.findings.map((f) => f.id)).size, 4);
    for (const f of h.findings) {
      assert.match(f.id, /^[0-9a-f]{16}$/);
      assert.equal(f.service, 'mcp-server');
      assert.equal(f.sessionKey, s.key);
      assert.ok(f.evidence.length > 0);
      assert.ok(!f.summary.includes('\n'));
      assert.match(f.summary, /docs\/runbook\.md#/);
      assert.ok(f.summary.includes(s.key!.slice(0, 8)));
    }
    const loss = h.findings.find((f) => f.kind === 'dedup_loss')!;
    assert.match(loss.summary, /the tools\/call \(long_job\) result for request 3/);
    assert.equal(loss.requestId, '3');
    const orphan = h.findings.find((f) => f.kind === 'orphaned_progress_token')!;
    assert.equal(orphan.progressToken, '3');
    assert.equal(orphan.requestId, '3');
    assert.equal(h.findings.find((f) => f.kind === 'minted_on_resume')!.newIncarnation !== undefined, true);
    assert.deepEqual(h.resumes.map((r) => r.outcome), ['forked']);
    assert.equal(h.resumes[0]!.service, 'mcp-server');
    assert.deepEqual(h.lags, [WINDOW, WINDOW, WINDOW, WINDOW]);
    assert.equal(h.engine.stats().orphanedByService.get('mcp-server'), 1);
    const st = h.engine.stats();
    assert.equal(st.pendingRequests, 1, 'request 3 never settled');
    assert.equal(st.activeSessionsByService.get('mcp-server'), 1, 'incarnation B is live');
    // Deciding again with nothing new reports nothing new.
    h.ingest(s.client.slice(0, 2));
    h.advance(WINDOW);
    assert.equal(h.findings.length, 4);
    assert.deepEqual(h.resumes.map((r) => r.outcome), ['forked']);
  });

  it('server spans only: minted_on_resume and the orphan the reaper left', () => {
    const h = harness();
    h.ingest(seedScenario().server);
    h.advance(WINDOW);
    assert.deepEqual(h.kinds(), ['minted_on_resume', 'orphaned_progress_token']);
    assert.deepEqual(h.resumes.map((r) => r.outcome), ['forked']);
  });

  it('client spans only: sequence_regression, dedup_loss, orphan; service is the client', () => {
    const h = harness();
    h.ingest(seedScenario().client);
    h.advance(WINDOW);
    assert.deepEqual(h.kinds(), ['dedup_loss', 'orphaned_progress_token', 'sequence_regression']);
    assert.ok(h.findings.every((f) => f.service === 'mcp-client'));
    assert.deepEqual(h.resumes.map((r) => r.outcome), ['forked']);
  });

  it('same finding ids whichever side arrives first and in whatever order', () => {
    const ref = harness();
    const s = seedScenario();
    ref.ingest([...s.server, ...s.client]);
    ref.advance(WINDOW);
    for (const seed of [1, 2, 3]) {
      const h = harness();
      const server = shuffled(s.server, seed);
      // Server spans in three batches a few seconds apart, the client's batch 8 s after the server's first.
      h.ingest(server.slice(0, 10));
      h.advance(3_000);
      h.ingest(server.slice(10, 20));
      h.advance(3_000);
      h.ingest(server.slice(20));
      h.advance(2_000);
      h.ingest(shuffled(s.client, seed + 10));
      // The client's batch holds its resume: the window restarts there (window-moments.ts).
      h.advance(WINDOW);
      assert.deepEqual(h.kinds(), SEED_BOTH, `order seed ${seed}`);
      assert.deepEqual(h.findings.map((f) => f.id).sort(), ref.findings.map((f) => f.id).sort());
      assert.deepEqual(h.resumes.map((r) => r.outcome), ['forked']);
    }
  });

  it('client spans arriving after the server-side decision add findings, never duplicates, and do not recount the resume', () => {
    const h = harness();
    const s = seedScenario();
    h.ingest(s.server);
    h.advance(WINDOW);
    assert.deepEqual(h.kinds(), ['minted_on_resume', 'orphaned_progress_token']);
    h.advance(20_000);
    h.ingest(s.client);
    h.advance(WINDOW);
    assert.deepEqual(h.kinds(), SEED_BOTH);
    assert.equal(h.resumes.length, 1);
  });

  it('client clock one hour ahead changes nothing', () => {
    const h = harness();
    const s = seedScenario({ clientSkewMs: 3_600_000 });
    h.ingest([...s.client, ...s.server]);
    h.advance(WINDOW);
    assert.deepEqual(h.kinds(), SEED_BOTH);
    const h2 = harness();
    const s2 = seedScenario({ clientSkewMs: -3_600_000 });
    h2.ingest(shuffled([...s2.client, ...s2.server], 7));
    h2.advance(WINDOW);
    assert.deepEqual(h2.kinds(), SEED_BOTH);
  });
});

describe('CorrelationEngine: healthy traffic produces no finding', { timeout: 10_000 }, () => {
  it('healthy resume: resumed once, no finding', () => {
    const h = harness();
    const s = healthyResumeScenario();
    h.ingest(shuffled([...s.server, ...s.client], 3));
    h.advance(WINDOW);
    assert.deepEqual(h.findings, []);
    assert.deepEqual(h.resumes.map((r) => r.outcome), ['resumed']);
  });

  it('guarded 404 then re-initialize: rejected_404, no finding', () => {
    const h = harness();
    const { old, fresh } = guarded404Scenario();
    h.ingest([...old.server, ...old.client, ...fresh.server, ...fresh.client]);
    h.advance(WINDOW);
    assert.deepEqual(h.findings, []);
    assert.deepEqual(h.resumes.map((r) => r.outcome), ['rejected_404']);
    const st = h.engine.stats();
    assert.equal(st.sessions, 2);
    assert.equal(st.activeSessionsByService.get('mcp-server'), 1, 'only the re-initialized session is live');
    assert.equal(st.pendingRequests, 0);
  });

  it('409 gap rejection: rejected_gap, no finding', () => {
    const h = harness();
    const s = gap409Scenario();
    h.ingest([...s.client, ...s.server]);
    h.advance(WINDOW);
    assert.deepEqual(h.findings, []);
    assert.deepEqual(h.resumes.map((r) => r.outcome), ['rejected_gap']);
  });

  it('a session id reused across reaper cycles (both lives created by initialize) is not a fork', () => {
    const h = harness();
    const s = reuseAcrossReaperScenario();
    h.ingest([...s.server, ...s.client]);
    h.advance(WINDOW);
    assert.deepEqual(h.findings, []);
  });

  it('stateless server spans never produce a fork finding', () => {
    const h = harness();
    const s = statelessScenario();
    h.ingest([...s.server, ...s.client]);
    h.advance(WINDOW);
    assert.deepEqual(h.findings.filter((f) => f.kind !== 'orphaned_progress_token'), []);
    assert.equal(h.engine.stats().activeSessionsByService.size, 0);
  });
});

describe('CorrelationEngine: scale, bounds, persistence', { timeout: 20_000 }, () => {
  it('1,000 concurrent sessions with 5 forks among them: exactly the forks', () => {
    const h = harness();
    const spans = [];
    const forkKeys = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      if (i % 200 === 7) {
        const s = seedScenario({ sessionId: `fork-${i}` });
        forkKeys.add(s.key!);
        spans.push(...s.server, ...s.client);
      } else {
        const s = healthyResumeScenario({ sessionId: `ok-${i}` });
        spans.push(...s.server, ...s.client);
      }
    }
    const mixed = shuffled(spans, 42);
    for (let i = 0; i < mixed.length; i += 5000) h.ingest(mixed.slice(i, i + 5000));
    h.advance(WINDOW);
    assert.equal(h.findings.length, 20);
    assert.deepEqual(new Set(h.findings.map((f) => f.sessionKey)), forkKeys);
    assert.equal(h.resumes.filter((r) => r.outcome === 'forked').length, 5);
    assert.equal(h.resumes.filter((r) => r.outcome === 'resumed').length, 995);
    assert.equal(h.engine.stats().sessions, 1000);
  });

  it('restart: a restored pending session is decided on time behind a newer pending one', () => {
    const a = harness();
    const s = seedScenario();
    a.ingest([...s.server, ...s.client]);
    a.advance(WINDOW / 2);
    const saved = a.engine.takeDirty();
    const b = harness({}, a.now());
    // Pending first, and not due when the restored session is: the tick must look past it.
    const other = healthyResumeScenario({ sessionId: 'restored-behind' });
    b.ingest([...other.server, ...other.client]);
    for (const x of saved) b.engine.restore(x.key, x.state!);
    b.advance(WINDOW / 2);
    assert.deepEqual(b.kinds(), SEED_BOTH);
  });

  it('restart: a fork pending at kill -9 is reported by the restored engine, once', () => {
    const a = harness();
    const s = seedScenario();
    a.ingest([...s.server, ...s.client]);
    a.advance(WINDOW / 2);
    assert.equal(a.findings.length, 0);
    const saved = a.engine.takeDirty();
    assert.ok(saved.length > 0 && saved.every((x) => x.state !== null));
    const b = harness({}, a.now());
    for (const x of saved) b.engine.restore(x.key, x.state!);
    b.advance(WINDOW / 2);
    assert.deepEqual(b.kinds(), SEED_BOTH);
    assert.equal(b.resumes.length, 1);
    // After deciding, a further restart plus duplicate spans yields no new finding id.
    const disk = new SavedStates().apply(saved).apply(b.engine.takeDirty());
    const c = harness({}, b.now());
    disk.restoreInto(c.engine);
    c.ingest([...s.server, ...s.client]);
    c.advance(WINDOW);
    assert.equal(c.findings.length, 0);
    assert.equal(c.resumes.length, 0);
    assert.equal(c.engine.stats().orphanedByService.get('mcp-server'), 1);
  });

  it('restore rejects garbage with a coded error', () => {
    const h = harness();
    assert.throws(() => h.engine.restore('k', '{not json'), { code: 'FORKWATCH_ERR_STORAGE' });
  });

  it('an orphan is resolved by a late settle', () => {
    const h = harness();
    const s = seedScenario();
    const settle = s.client.find((x) => x.name === 'forkwatch.request.settled')!;
    h.ingest(s.client);
    h.advance(WINDOW);
    const orphan = h.findings.find((f) => f.kind === 'orphaned_progress_token')!;
    assert.ok(orphan);
    assert.equal(h.engine.stats().orphanedByService.get('mcp-client'), 1);
    h.advance(30_000);
    h.ingest([
      {
        ...settle,
        spanId: 'ffffffffffffff01',
        startMs: settle.startMs + 60_000,
        attributes: { ...settle.attributes, 'jsonrpc.request.id': '3', 'forkwatch.progress.token': '3', 'forkwatch.request.outcome': 'timeout' },
      },
    ]);
    assert.equal(h.resolved.length, 1);
    assert.equal(h.resolved[0]!.id, orphan.id);
    assert.equal(h.resolved[0]!.resolvedAtMs, h.now());
    assert.equal(h.engine.stats().orphanedByService.get('mcp-client'), undefined);
    h.advance(WINDOW);
    assert.equal(h.findings.length, 3, 'no orphan re-reported');
  });

  it('expires idle sessions, and their orphans stop counting', () => {
    const h = harness({ sessionTtlMs: 100_000, compactAfterMs: 50_000 });
    h.ingest(seedScenario().client);
    h.advance(WINDOW);
    assert.equal(h.engine.stats().orphanedByService.get('mcp-client'), 1);
    h.advance(60_000);
    assert.equal(h.engine.stats().sessions, 1, 'compacted, still tracked');
    h.advance(40_000);
    assert.equal(h.engine.stats().sessions, 0);
    assert.equal(h.drops.get('session_expired'), 1);
    assert.equal(h.engine.stats().orphanedByService.size, 0);
    const dirty = h.engine.takeDirty();
    assert.deepEqual(dirty.map((d) => d.state), [null]);
  });

  it('compacts idle decided sessions; late spans continue them without duplicates; lineage survives', () => {
    const h = harness();
    const s = seedScenario();
    h.ingest(s.server);
    h.advance(WINDOW);
    const before = h.engine.lineage(s.key!)!;
    assert.equal(before.incarnations.length, 2);
    assert.equal(before.incarnations.find((i) => i.createdBy === 'GET')?.clientSuppliedId, true);
    assert.equal(before.findingIds.length, 2);
    h.advance(120_000);
    const compact = h.engine.lineage(s.key!)!;
    assert.deepEqual(compact.findingIds.sort(), before.findingIds.sort());
    assert.equal(h.engine.stats().events, 0);
    assert.equal(h.engine.stats().pendingRequests, 0);
    assert.equal(h.engine.stats().activeSessionsByService.get('mcp-server'), 1);
    h.ingest(s.server.slice(0, 5));
    h.advance(WINDOW);
    assert.equal(h.findings.length, 2);
  });

  it('a listener that throws does not break the engine', () => {
    let calls = 0;
    const e = new CorrelationEngine(
      { now: () => 1_000 },
      {
        onFinding: () => {
          calls++;
          throw new Error('boom');
        },
      },
      { decisionWindowMs: 0 },
    );
    e.ingest(seedScenario().server);
    e.tick();
    assert.equal(calls, 2);
  });
});

describe('CorrelationEngine: other fork kinds', { timeout: 10_000 }, () => {
  it('replay_gap from a 2xx resume whose cursor is not in the serving log (both sides: one finding)', async () => {
    const { SessionScript, inc } = await import('../fixtures/scenarios/scenarios.js');
    const { sessionKeyOf } = await import('../fixtures/scenarios/span-factory.js');
    const s = new SessionScript({ key: sessionKeyOf('gap'), guarded: false }, 'counter');
    const A = inc('gapA');
    const e = (n: number) => ({ id: `e${n}`, seq: n, kind: 'notification' as const, method: 'notifications/message', data: `m${n}` });
    s.created(0, A, 'initialize');
    for (let i = 1; i <= 3; i++) s.both(i, A, e(i));
    for (let i = 4; i <= 9; i++) s.serverEvent(i, A, e(i));
    s.clientResume(5_000, 'e3', 200).serverResume(5_001, 'e3', 200, { inc: A, found: false });
    s.serverEvent(5_002, A, e(9), { replayed: true }).clientEvent(5_010, undefined, e(9));
    const h = harness();
    h.ingest([...s.server, ...s.client]);
    h.advance(WINDOW);
    assert.deepEqual(h.kinds(), ['replay_gap']);
    assert.equal(h.findings[0]!.evidence.filter((x) => x.side === 'client').length > 0, true);
    assert.equal(h.findings[0]!.evidence.filter((x) => x.side === 'server').length > 0, true);
    assert.deepEqual(h.resumes.map((r) => r.outcome), ['forked']);
    const c = harness();
    c.ingest(s.client);
    c.advance(WINDOW);
    assert.deepEqual(c.kinds(), ['replay_gap']);
    assert.equal(c.findings[0]!.id, h.findings[0]!.id);
  });

  it('incarnation_changed when a resume answers another incarnation without initialize', async () => {
    const { SessionScript, inc } = await import('../fixtures/scenarios/scenarios.js');
    const { sessionKeyOf } = await import('../fixtures/scenarios/span-factory.js');
    const s = new SessionScript({ key: sessionKeyOf('ic'), guarded: true }, 'server');
    const A = inc('icA');
    const B = inc('icB');
    const e = (p: string, n: number) => ({ id: `${p}-${n}`, seq: n, kind: 'notification' as const, method: 'notifications/message', data: `${p}${n}` });
    for (let i = 1; i <= 4; i++) s.clientEvent(i * 10, A, e(A, i));
    s.clientResume(1_000, `${A}-4`, 200, { previousInc: A, inc: B });
    s.clientEvent(1_010, B, e(B, 1));
    const h = harness();
    h.ingest(s.client);
    h.advance(WINDOW);
    assert.deepEqual(h.kinds(), ['incarnation_changed', 'sequence_regression']);
    const f: Finding = h.findings.find((x) => x.kind === 'incarnation_changed')!;
    assert.equal(f.incarnation, A);
    assert.equal(f.newIncarnation, B);
  });
});
