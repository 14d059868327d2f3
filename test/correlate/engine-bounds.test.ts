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

  it('bounds requests per session', () => {
    const h = harness({ maxRequestsPerSession: 3 });
    const s = seedScenario();
    h.ingest(s.client);
    assert.equal(h.drops.get('requests_per_session'), 1);
  });
});
