import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readFileSync } from 'node:fs';
import { ByteWriter } from '../../../src/correlate/byte-writer.js';
import { ByteReader } from '../../../src/correlate/byte-reader.js';
import { decodeBinarySession, encodeBinarySession } from '../../../src/correlate/codec/binary-session.js';
import type { EventFact, SessionState } from '../../../src/correlate/session-state.js';
import { deserializeSession, serializeSession } from '../../../src/correlate/codec/json-session.js';
import type { SpanRecord } from '../../../src/model/span-record.js';
import {
  gap409Scenario,
  guarded404Scenario,
  guardedStockScenario,
  healthyResumeScenario,
  reuseAcrossReaperScenario,
  seedScenario,
  statelessScenario,
} from '../../fixtures/scenarios/scenarios.js';
import { harness, shuffled } from '../harness.js';

/** Every full session an engine holds after ingesting `spans` (in the given order). */
function sessionsOf(spans: SpanRecord[], options: Parameters<typeof harness>[0] = {}): SessionState[] {
  const h = harness(options, 1_900_000_000_000.25);
  for (let i = 0; i < spans.length; i += 7) {
    h.ingest(spans.slice(i, i + 7));
    h.advance(1_000.5);
  }
  return [...(h.engine as unknown as { full: Map<string, SessionState> }).full.values()];
}

/** What a state means, independent of representation: Map to entries, undefined keys dropped. */
function plain(s: SessionState): unknown {
  return JSON.parse(JSON.stringify({ ...s, requests: [...s.requests.entries()] }));
}

function roundTrip(s: SessionState): SessionState {
  const bytes = encodeBinarySession(new ByteWriter(16), s);
  return deserializeSession(bytes) as SessionState;
}

function allScenarioSpans(): SpanRecord[][] {
  const g = guarded404Scenario({ sessionId: 'codec-404' });
  return [
    seedScenario({ sessionId: 'codec-seed' }),
    healthyResumeScenario({ sessionId: 'codec-healthy' }),
    g.old,
    g.fresh,
    gap409Scenario({ sessionId: 'codec-gap' }),
    reuseAcrossReaperScenario({ sessionId: 'codec-reuse' }),
    statelessScenario({ sessionId: 'codec-stateless' }),
    guardedStockScenario({ sessionId: 'codec-stock' }),
  ].map((sc) => [...sc.server, ...sc.client]);
}

describe('binary session state (format 3)', () => {
  it('round-trips the sessions of every scenario exactly, in any arrival order', () => {
    let checked = 0;
    for (const spans of allScenarioSpans()) {
      for (const order of [spans, shuffled(spans, 7), shuffled(spans, 11)]) {
        for (const s of sessionsOf(order)) {
          assert.deepEqual(plain(roundTrip(s)), plain(s));
          checked++;
        }
      }
    }
    assert.ok(checked >= 24, `${checked} sessions checked`);
  });

  it('round-trips sessions that dropped events for space (client baseline, dropped counts)', () => {
    const spans = allScenarioSpans().flat();
    const sessions = sessionsOf(spans, { maxEventsPerIncarnation: 2, maxRequestsPerSession: 1, maxResumesPerSession: 1, maxIncarnationsPerSession: 1 });
    assert.ok(sessions.some((s) => s.clientBaseline !== undefined && Object.keys(s.droppedEvents).length > 0));
    for (const s of sessions) assert.deepEqual(plain(roundTrip(s)), plain(s));
  });

  it('keeps unusual values exact: non-hex ids, non-ASCII text, odd numbers, hostile keys', () => {
    const s = sessionsOf(seedScenario({ sessionId: 'codec-odd' }).client)[0]!;
    const e = s.events[0]!;
    const odd: EventFact = {
      ...e,
      traceId: 'not-hex-at-all',
      spanId: 'ABCDEF0123456789',
      eventId: 'événement-7',
      inc: 'ünïcode',
      seq: -0.5,
      digest: 'DEADBEEF',
      method: 'x'.repeat(300),
      timeMs: Number.MAX_VALUE,
    };
    // U+0130 masked to 7 bits would read as the hex digit 0.
    const notHex = `${'0'.repeat(31)}\u0130`;
    s.events.push(odd, { ...odd, seq: 2 ** 40, eventId: 'ünïcode-1099511627776', traceId: notHex }, { ...odd, seq: 7, eventId: 'ünïcode-007' });
    s.knownIncarnations['__proto__'] = 'initialize';
    s.eventCounts['client:__proto__'] = 3;
    const back = roundTrip(s);
    assert.deepEqual(plain(back), plain(s));
    assert.equal(Object.getPrototypeOf(back.knownIncarnations), Object.prototype);
    assert.equal(back.events.at(-1)!.eventId, 'ünïcode-007');
  });

  it('keeps emitted findings and a pending decision', () => {
    const h = harness();
    const sc = seedScenario({ sessionId: 'codec-emitted' });
    h.ingest([...sc.server, ...sc.client]);
    h.advance(10_000);
    h.ingest(sc.client.slice(0, 1));
    const s = (h.engine as unknown as { full: Map<string, SessionState> }).full.get(sc.key!)!;
    assert.ok(Object.keys(s.emitted).length > 0 && s.pendingSinceMs !== undefined);
    assert.deepEqual(plain(roundTrip(s)), plain(s));
  });

  it('is much smaller than format-2 JSON', () => {
    for (const spans of allScenarioSpans().slice(0, 2)) {
      for (const s of sessionsOf(spans)) {
        const bin = encodeBinarySession(new ByteWriter(), s).length;
        const json = Buffer.byteLength(serializeSession(s));
        assert.ok(bin < json * 0.45, `${bin} B binary vs ${json} B JSON`);
      }
    }
  });

  it('records written into one writer stay intact when it grows', () => {
    const sessions = allScenarioSpans().flatMap((spans) => sessionsOf(spans));
    const w = new ByteWriter(8);
    const out = sessions.map((s) => encodeBinarySession(w, s));
    out.forEach((bytes, i) => assert.deepEqual(plain(decodeBinarySession(bytes)), plain(sessions[i]!)));
  });

  it('rejects truncated and corrupted states with a TypeError', () => {
    const s = sessionsOf(seedScenario({ sessionId: 'codec-bad' }).server)[0]!;
    const bytes = Buffer.from(encodeBinarySession(new ByteWriter(), s));
    for (const cut of [1, 2, 10, bytes.length >> 1, bytes.length - 1]) {
      assert.throws(() => decodeBinarySession(bytes.subarray(0, cut)), TypeError, `cut at ${cut}`);
    }
    assert.throws(() => decodeBinarySession(Buffer.concat([bytes, Buffer.from([0])])), TypeError);
  });

  it('reads format-3 states written before schema 3 (fixtures made by that encoder)', () => {
    for (const name of ['healthy', 'seed']) {
      const bytes = readFileSync(new URL(`../../fixtures/session-state/format3-${name}.bin`, import.meta.url));
      const want: unknown = JSON.parse(readFileSync(new URL(`../../fixtures/session-state/format3-${name}.json`, import.meta.url), 'utf8'));
      const s = decodeBinarySession(bytes);
      assert.deepEqual(plain(s), want, name);
      assert.deepEqual(plain(roundTrip(s)), want, `${name}, written again by this build`);
    }
  });

  it('still reads JSON states given as bytes', () => {
    const s = sessionsOf(seedScenario({ sessionId: 'codec-json' }).server)[0]!;
    const back = deserializeSession(Buffer.from(serializeSession(s))) as SessionState;
    assert.deepEqual(plain(back), plain(s));
  });
});

describe('ByteWriter / ByteReader', () => {
  it('round-trip numbers and strings at their edges', () => {
    const nums = [0, 1, 63, 64, 127, 128, 2 ** 31 - 1, 2 ** 31, 2 ** 32, Number.MAX_SAFE_INTEGER, -1, -0, 0.5, NaN, Infinity, -Infinity, 1e300];
    const strs = ['', 'a', 'x'.repeat(127), 'y'.repeat(128), 'é', '😀'.repeat(100), 'a\u0000b'];
    const w = new ByteWriter(4);
    w.begin();
    for (const n of nums) w.num(n);
    for (const s of strs) w.str(s);
    w.varuint(Number.MAX_SAFE_INTEGER);
    const r = new ByteReader(w.end());
    for (const n of nums) assert.ok(Object.is(r.num(), n), String(n));
    for (const s of strs) assert.equal(r.str(), s);
    assert.equal(r.varuint(), Number.MAX_SAFE_INTEGER);
    assert.ok(r.done());
  });
});
