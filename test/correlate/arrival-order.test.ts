/**
 * Clients stamp whole milliseconds, so spans share timestamps; the engine breaks ties by event
 * sequence and a stable key, never by arrival. Every capture in test/fixtures/otlp/ is fed in
 * every order of its equal-timestamp groups (all combinations, up to a bound, then sampled), cut
 * into random batches, and must give the same findings and resume outcomes.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { SpanRecord } from '../../src/model/span-record.js';
import { ATTR_SSE_EVENT_SEQ } from '../../packages/instrumentation/src/semconv.js';
import { type EventSpec, SessionScript, inc } from '../fixtures/scenarios/scenarios.js';
import { sessionKeyOf } from '../fixtures/scenarios/span-factory.js';
import { allCaptures, cut, rng, runBatches, shuffle } from './captures.js';

/** Orders tried per capture: every combination of group permutations when there are at most this many. */
const MAX_ORDERS = 256;

function permutations<T>(xs: T[]): T[][] {
  if (xs.length <= 1) return [xs];
  const out: T[][] = [];
  xs.forEach((x, i) => {
    for (const p of permutations([...xs.slice(0, i), ...xs.slice(i + 1)])) out.push([x, ...p]);
  });
  return out;
}

/** The spans by time (stable), as runs of equal start times. */
function groups(spans: SpanRecord[]): SpanRecord[][] {
  const sorted = [...spans].sort((a, b) => a.startMs - b.startMs);
  const out: SpanRecord[][] = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && last[0]!.startMs === s.startMs) last.push(s);
    else out.push([s]);
  }
  return out;
}

/** Orders of the spans that differ only within equal-timestamp groups. */
function orders(spans: SpanRecord[], seed: number): SpanRecord[][] {
  const gs = groups(spans);
  const perms = gs.map((g) => (g.length <= 5 ? permutations(g) : [g]));
  let total = 1;
  for (const p of perms) total *= p.length;
  const out: SpanRecord[][] = [];
  if (total <= MAX_ORDERS) {
    for (let n = 0; n < total; n++) {
      let k = n;
      const o: SpanRecord[] = [];
      for (const p of perms) {
        o.push(...p[k % p.length]!);
        k = Math.floor(k / p.length);
      }
      out.push(o);
    }
  } else {
    const rnd = rng(seed);
    for (let n = 0; n < MAX_ORDERS; n++) out.push(gs.flatMap((g) => shuffle(g, rnd)));
  }
  return out;
}

/** The capture as a coarser clock would stamp it (more ties): start and end rounded down to `ms`. */
function coarse(spans: SpanRecord[], ms: number): SpanRecord[] {
  return spans.map((s) => ({ ...s, startMs: Math.floor(s.startMs / ms) * ms, endMs: Math.floor(s.endMs / ms) * ms }));
}

const captures = allCaptures().flatMap(({ name, spans }) => [
  { name, spans },
  { name: `${name} on a 5 ms clock`, spans: coarse(spans, 5) },
]);

describe('findings do not depend on arrival order', { timeout: 120_000 }, () => {
  for (const { name, spans } of captures) {
    it(`${name}: every order of equal timestamps, in random batches, gives the same findings`, () => {
      const ref = runBatches([[...spans].sort((a, b) => a.startMs - b.startMs)]);
      const all = orders(spans, 1);
      assert.ok(all.length >= 1);
      all.forEach((o, i) => {
        const rnd = rng(1000 + i);
        const got = runBatches(cut(o, rnd));
        assert.deepEqual(got, ref, `order ${i}`);
        // The same order reversed in whole-batch terms: later spans first.
        if (i % 16 === 0) assert.deepEqual(runBatches(cut(o, rnd).reverse()), ref, `order ${i}, batches reversed`);
      });
    });
  }
});

describe('ties on one millisecond', { timeout: 10_000 }, () => {
  it('a replay burst stamped in one client millisecond is walked by seq: no replay_gap whichever event arrives first', () => {
    const s = new SessionScript({ key: sessionKeyOf('T1'), guarded: true }, 'server');
    const A = inc('T1:A');
    const e = (n: number): EventSpec => ({ id: `${A}-${n}`, seq: n, kind: 'notification', method: 'notifications/progress', token: '1', data: `p${n}` });
    s.sent(0, '1', 'tools/call', { tool: 'build', token: '1', inc: A });
    for (let n = 1; n <= 5; n++) s.clientEvent(n * 10, A, e(n));
    s.clientResume(5_000, `${A}-5`, 200, { inc: A, previousInc: A });
    for (const n of [6, 7, 8]) s.clientEvent(5_010, A, e(n));
    s.settled(6_000, '1', 'tools/call', 'answered', '1');
    const spans = s.done().client;
    const burst = spans.filter((x) => x.startMs === spans.find((y) => y.attributes[ATTR_SSE_EVENT_SEQ] === 6)!.startMs);
    assert.equal(burst.length, 3);
    const rest = spans.filter((x) => !burst.includes(x));
    for (const order of [burst, [...burst].reverse(), [burst[1]!, burst[2]!, burst[0]!]]) {
      assert.deepEqual(runBatches([[...rest, ...order]]), { findings: [], resumes: ['resumed'] });
    }
  });
});
