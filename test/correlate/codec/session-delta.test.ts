import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ByteWriter } from '../../../src/correlate/byte-writer.js';
import { decodeBinarySession, encodeBinarySession } from '../../../src/correlate/codec/binary-session.js';
import { applySessionDelta } from '../../../src/correlate/codec/session-delta.js';
import { MAX_LOG_CHUNKS, replayLog } from '../../../src/correlate/codec/state-journal.js';
import { CorrelationEngine } from '../../../src/correlate/correlation-engine.js';
import type { SessionState } from '../../../src/correlate/session-state.js';
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
import { SavedStates, harness, shuffled } from '../harness.js';

function allSpans(tag: string): SpanRecord[] {
  const g = guarded404Scenario({ sessionId: `${tag}-404` });
  return [
    seedScenario({ sessionId: `${tag}-seed` }),
    healthyResumeScenario({ sessionId: `${tag}-healthy` }),
    g.old,
    g.fresh,
    gap409Scenario({ sessionId: `${tag}-gap` }),
    reuseAcrossReaperScenario({ sessionId: `${tag}-reuse` }),
    statelessScenario({ sessionId: `${tag}-stateless` }),
    guardedStockScenario({ sessionId: `${tag}-stock` }),
  ].flatMap((sc) => [...sc.server, ...sc.client]);
}

function live(engine: CorrelationEngine): Map<string, SessionState> {
  return (engine as unknown as { full: Map<string, SessionState> }).full;
}

const bytes = (s: SessionState): Buffer => Buffer.from(encodeBinarySession(new ByteWriter(64), s));

/**
 * Every full session of `engine` read back from `disk` (whole state + log) encodes exactly as the
 * live one, but for one departure: a decision that reported nothing is not saved, so the saved
 * state may still be pending where the live one was decided (a restart decides it again).
 */
function assertSavedEqualsLive(engine: CorrelationEngine, disk: SavedStates, where: string): number {
  let n = 0;
  for (const [key, s] of live(engine)) {
    const row = disk.byKey.get(key);
    assert.ok(row !== undefined, `${where}: ${key} saved`);
    const back = replayLog(decodeBinarySession(row.state as Uint8Array), row.log);
    if (s.pendingSinceMs === undefined) delete back.pendingSinceMs;
    assert.deepEqual(bytes(back), bytes(s), `${where}: ${key} after ${row.log.length} deltas`);
    n++;
  }
  return n;
}

function count(changes: ReturnType<CorrelationEngine['takeDirty']>, into: { whole: number; deltas: number }): typeof changes {
  for (const c of changes) {
    if (c.log !== undefined) into.deltas++;
    else if (c.state instanceof Uint8Array) into.whole++;
  }
  return changes;
}

/**
 * Ingests `spans` in slices of random size with the clock moving (decisions, compaction and
 * expiry happen on the way), saving after a random number of slices, and checks after every
 * save that whole state plus deltas read back equal the live state.
 */
function run(spans: SpanRecord[], seed: number, options: Parameters<typeof harness>[0] = {}): { whole: number; deltas: number; checked: number } {
  let a = seed >>> 0;
  const rnd = (): number => {
    a = (Math.imul(a, 1_103_515_245) + 12_345) >>> 0;
    return a / 4294967296;
  };
  const h = harness(options, 1_900_000_000_000.25);
  const disk = new SavedStates();
  const out = { whole: 0, deltas: 0, checked: 0 };
  for (let i = 0; i < spans.length; ) {
    const n = 1 + Math.floor(rnd() * 9);
    h.ingest(spans.slice(i, i + n));
    i += n;
    const r = rnd();
    h.advance(r < 0.05 ? 11_000 : r < 0.07 ? 65_000 : Math.floor(rnd() * 400) + 0.5);
    if (rnd() < 0.4) {
      disk.apply(count(h.engine.takeDirty(), out));
      out.checked += assertSavedEqualsLive(h.engine, disk, `seed ${seed} at span ${i}`);
    }
  }
  disk.apply(count(h.engine.takeDirty(), out));
  out.checked += assertSavedEqualsLive(h.engine, disk, `seed ${seed} at the end`);
  return out;
}

const SMALL = { maxEventsPerIncarnation: 2, maxRequestsPerSession: 2, maxResumesPerSession: 1, maxIncarnationsPerSession: 1 };

describe('session state deltas (format 4)', () => {
  it('whole state then deltas read back equal the live state, for every scenario in many orders', () => {
    const total = { whole: 0, deltas: 0, checked: 0 };
    for (let seed = 1; seed <= 12; seed++) {
      const spans = shuffled(allSpans(`d${seed}`), seed);
      const r = run(spans, seed);
      total.whole += r.whole;
      total.deltas += r.deltas;
      total.checked += r.checked;
    }
    assert.ok(total.deltas > total.whole, `more deltas (${total.deltas}) than whole states (${total.whole})`);
    assert.ok(total.checked > 500, `${total.checked} sessions checked`);
  });

  it('stays exact when events, requests, resumes and incarnations are dropped for space', () => {
    let deltas = 0;
    for (let seed = 1; seed <= 12; seed++) {
      const spans = seed % 2 === 0 ? allSpans(`s${seed}`) : shuffled(allSpans(`s${seed}`), seed);
      deltas += run(spans, seed * 31, SMALL).deltas;
    }
    assert.ok(deltas > 50, `${deltas} deltas`);
  });

  it('continues with deltas after a restart, from the saved state read back', () => {
    const spans = allSpans('restart');
    const cut = Math.floor(spans.length / 2);
    const a = harness({}, 1_900_000_000_000);
    const disk = new SavedStates();
    for (let i = 0; i < cut; i += 5) {
      a.ingest(spans.slice(i, Math.min(i + 5, cut)));
      a.advance(300);
      disk.apply(a.engine.takeDirty());
    }
    const b = harness({}, a.now());
    disk.restoreInto(b.engine);
    assert.deepEqual([...live(b.engine).keys()].sort(), [...live(a.engine).keys()].sort());
    const counts = { whole: 0, deltas: 0 };
    for (let i = cut; i < spans.length; i += 5) {
      b.ingest(spans.slice(i, i + 5));
      b.advance(300);
      disk.apply(count(b.engine.takeDirty(), counts));
      assertSavedEqualsLive(b.engine, disk, `after restart, span ${i}`);
    }
    assert.ok(counts.deltas > 0, 'sessions read back are continued with deltas');
  });

  it('rewrites the whole state once the log is long', () => {
    const h = harness();
    const sc = healthyResumeScenario({ sessionId: 'long' });
    const disk = new SavedStates();
    const spans = [...sc.server, ...sc.client];
    let longest = 0;
    // The same spans again and again under new span ids: a session that keeps growing.
    for (let round = 0; round < 3 * MAX_LOG_CHUNKS; round++) {
      const span = spans[round % spans.length]!;
      h.ingest([{ ...span, spanId: (round + 1).toString(16).padStart(16, '0') }]);
      h.advance(10);
      disk.apply(h.engine.takeDirty());
      longest = Math.max(longest, disk.byKey.get(sc.key!)!.log.length);
    }
    assert.ok(longest > 1 && longest <= MAX_LOG_CHUNKS, `log of at most ${MAX_LOG_CHUNKS} deltas (longest ${longest})`);
    assertSavedEqualsLive(h.engine, disk, 'long session');
  });

  it('stays exact when the clock steps back between saves', () => {
    let now = 1_900_000_000_000;
    const engine = new CorrelationEngine({ now: () => now });
    const sc = seedScenario({ sessionId: 'clock' });
    const spans = [...sc.client, ...sc.server];
    const disk = new SavedStates();
    const kinds = (): string[] => disk.last.map((c) => (c.log !== undefined ? 'delta' : 'whole'));
    engine.ingest(spans.slice(0, 4));
    disk.apply(engine.takeDirty());
    assert.deepEqual(kinds(), ['whole']);
    let deltas = 0;
    for (let i = 4; i < spans.length; i += 3) {
      now += i % 2 === 0 ? -1_000 : 50;
      engine.ingest(spans.slice(i, i + 3));
      disk.apply(engine.takeDirty());
      if (kinds()[0] === 'delta') deltas++;
      assertSavedEqualsLive(engine, disk, `clock moved, span ${i}`);
    }
    assert.ok(deltas >= 2, `${deltas} deltas`);
  });

  it('keeps the order of requests when a dropped request id comes again', () => {
    const h = harness({ maxRequestsPerSession: 2 });
    const sc = seedScenario({ sessionId: 'reused-ids' });
    const req = sc.client.find((x) => x.name === 'forkwatch.request.sent')!;
    const sent = (id: string, n: number): SpanRecord => ({ ...req, spanId: n.toString(16).padStart(16, '0'), attributes: { ...req.attributes, 'jsonrpc.request.id': id } });
    const disk = new SavedStates();
    h.ingest([sent('a', 1), sent('b', 2)]);
    disk.apply(h.engine.takeDirty());
    // 'a' is dropped for 'c', then comes again (dropping 'b'), then 'b' is completed... as a new request.
    h.ingest([sent('c', 3), sent('a', 4), sent('b', 5)]);
    disk.apply(h.engine.takeDirty());
    assertSavedEqualsLive(h.engine, disk, 'reused request ids');
    assert.deepEqual([...live(h.engine).get(sc.key!)!.requests.keys()], ['a', 'b']);
  });

  it('rejects a delta that does not fit the state with a TypeError', () => {
    const h = harness();
    const sc = healthyResumeScenario({ sessionId: 'bad-delta' });
    const spans = [...sc.client, ...sc.server];
    const disk = new SavedStates();
    h.ingest(spans.slice(0, 6));
    disk.apply(h.engine.takeDirty());
    h.ingest(spans.slice(6, 12));
    const chunk = h.engine.takeDirty().find((c) => c.key === sc.key)!.log![0]!;
    const base = (): SessionState => decodeBinarySession(disk.byKey.get(sc.key!)!.state as Uint8Array);
    assert.throws(() => applySessionDelta(base(), Buffer.concat([chunk, Buffer.from([0])])), TypeError);
    for (const cut of [0, 1, 5, chunk.length >> 1, chunk.length - 1]) {
      assert.throws(() => applySessionDelta(base(), chunk.subarray(0, cut)), TypeError, `cut at ${cut}`);
    }
    assert.throws(() => applySessionDelta(base(), encodeBinarySession(new ByteWriter(), base())), TypeError, 'a whole state is no delta');
  });
});
