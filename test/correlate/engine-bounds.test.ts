import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { healthyResumeScenario, seedScenario } from '../fixtures/scenarios/scenarios.js';
import { harness } from './harness.js';

// The engine's memory limits: sessions, events (per incarnation and across sessions), requests.
describe('CorrelationEngine: bounds', { timeout: 10_000 }, () => {
  it('bounds sessions and events, counting drops', () => {
    const h = harness({ maxSessions: 10, maxEventsPerIncarnation: 4 });
    for (let i = 0; i < 15; i++) h.ingest(healthyResumeScenario({ sessionId: `b-${i}` }).server);
    const st = h.engine.stats();
    assert.equal(st.sessions, 10);
    assert.equal(h.drops.get('session_capacity'), 5);
    assert.ok((h.drops.get('events_per_session') ?? 0) > 0);
    assert.ok(st.events <= 10 * 4);
  });

  it('bounds the events held across sessions, evicting the least recently updated whole and counting event_capacity', () => {
    const one = harness();
    one.ingest(healthyResumeScenario({ sessionId: 'e-probe' }).server);
    const perSession = one.engine.stats().events;
    assert.ok(perSession >= 2, `a healthy resume holds events (${perSession})`);
    const cap = Math.floor(perSession * 2.5);
    const h = harness({ maxTrackedEvents: cap });
    const keys: string[] = [];
    for (let i = 0; i < 6; i++) {
      const server = healthyResumeScenario({ sessionId: `e-${i}` }).server;
      keys.push(String(server.find((sp) => typeof sp.attributes['forkwatch.session.key'] === 'string')!.attributes['forkwatch.session.key']));
      h.ingest(server);
      assert.ok(h.engine.stats().events <= cap, `after session ${i}: ${h.engine.stats().events} events held, cap ${cap}`);
    }
    // Two whole sessions fit under 2.5 sessions' events: the four oldest went, the newest stayed.
    assert.equal(h.drops.get('event_capacity'), 4);
    assert.equal(h.engine.stats().sessions, 2);
    assert.equal(h.engine.lineage(keys[0]!), undefined);
    assert.notEqual(h.engine.lineage(keys[5]!), undefined);
    assert.notEqual(h.engine.lineage(keys[4]!), undefined);
  });

  it("the state journal keeps one mark per session held: evicted, compacted and expired sessions take theirs along", () => {
    const h = harness({ maxSessions: 10, compactAfterMs: 60_000, sessionTtlMs: 600_000 });
    const journal = (h.engine as unknown as { journal: { size: number } }).journal;
    for (let i = 0; i < 50; i++) {
      h.ingest(healthyResumeScenario({ sessionId: `j-${i}` }).server);
      h.engine.takeDirty();
    }
    assert.equal(h.drops.get('session_capacity'), 40);
    assert.equal(journal.size, 10, 'one mark per tracked session, none for the 40 evicted');
    h.advance(120_000);
    h.engine.takeDirty();
    assert.equal(journal.size, 0, 'compacted sessions keep no mark');
    // A compacted session that comes back is a new object: its first save is whole, and it is marked again.
    h.ingest(healthyResumeScenario({ sessionId: 'j-49' }).server);
    const again = h.engine.takeDirty();
    assert.ok(again.length > 0 && again.every((c) => c.state !== undefined && c.log === undefined), 'written whole');
    assert.equal(journal.size, 1);
    h.advance(1_000_000);
    h.engine.takeDirty();
    assert.equal(journal.size, 0, 'expired sessions keep no mark');
  });

  it('bounds requests per session', () => {
    const h = harness({ maxRequestsPerSession: 3 });
    const s = seedScenario();
    h.ingest(s.client);
    assert.equal(h.drops.get('requests_per_session'), 1);
  });
});
