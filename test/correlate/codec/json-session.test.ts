import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SessionState } from '../../../src/correlate/session-state.js';
import { deserializeSession, serializeSession } from '../../../src/correlate/codec/json-session.js';
import { seedScenario } from '../../fixtures/scenarios/scenarios.js';
import { harness } from '../harness.js';

/** A live (uncompacted) session with every kind of fact, as the engine holds it. */
function liveSession(clockMs = 1_900_000_000_000): SessionState {
  const h = harness({}, clockMs);
  const s = seedScenario({ sessionId: 'state-roundtrip' });
  h.ingest(s.server);
  h.advance(3_000);
  h.ingest(s.client);
  const full = (h.engine as unknown as { full: Map<string, SessionState> }).full;
  return full.get(s.key!)!;
}

/** What a state means, independent of representation: Map to entries, undefined keys dropped. */
function plain(s: SessionState): unknown {
  return JSON.parse(JSON.stringify({ ...s, requests: [...s.requests.entries()] }));
}

describe('session state persistence', () => {
  it('round-trips a live session with every fact kind exactly', () => {
    const s = liveSession();
    assert.ok(s.events.length > 0 && s.created.length > 1 && s.ended.length > 0 && s.resumes.length > 0 && s.requests.size > 0);
    const back = deserializeSession(serializeSession(s)) as SessionState;
    assert.deepEqual(plain(back), plain(s));
  });

  it('keeps ingest times exact with a fractional clock', () => {
    const s = liveSession(1_900_000_000_000.123);
    s.events[0]!.ingestMs = 1_899_999_999_999.777;
    const back = deserializeSession(serializeSession(s)) as SessionState;
    assert.deepEqual(plain(back), plain(s));
  });

  it('writes far fewer bytes than keyed JSON', () => {
    const s = liveSession();
    const keyed = JSON.stringify({ ...s, requests: [...s.requests.values()] });
    const compact = serializeSession(s);
    assert.ok(compact.length < keyed.length * 0.7, `${compact.length} vs ${keyed.length}`);
  });

  it('still reads format 1 (keyed objects) written by earlier builds', () => {
    const s = liveSession();
    const v1 = JSON.stringify({ ...s, requests: [...s.requests.values()] });
    const back = deserializeSession(v1) as SessionState;
    assert.deepEqual(plain(back), plain(s));
  });

  it('rejects a malformed format-2 event', () => {
    const s = liveSession();
    const bad = JSON.parse(serializeSession(s)) as { events: unknown[] };
    bad.events[0] = { not: 'an array' };
    assert.throws(() => deserializeSession(JSON.stringify(bad)), TypeError);
  });
});
