import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { latencyVerdict, quantile, quantileDifference, quantileDifferences } from '../../bench/sidecar/latency-interval.js';

describe('sidecar bench: added latency with an interval (issue 28)', () => {
  // Calls of 3.0-3.1 ms, as an idle machine gives them.
  const base = Array.from({ length: 1000 }, (_, i) => 3 + ((i * 7919) % 1000) / 10000);

  it('quantile is the nearest rank of the sorted samples', () => {
    assert.equal(quantile([5, 1, 4, 2, 3], 0.5), 3);
    assert.equal(quantile([5, 1, 4, 2, 3], 0.99), 5);
    assert.equal(quantile([5, 1, 4, 2, 3], 0), 1);
  });

  it('a shift every call shares has no spread: the interval is the shift itself', () => {
    const d = quantileDifference(base, base.map((x) => x + 2), 0.99);
    assert.ok(Math.abs(d.diff - 2) < 1e-9 && Math.abs(d.lo - 2) < 1e-9 && Math.abs(d.hi - 2) < 1e-9, JSON.stringify(d));
    assert.equal(latencyVerdict(d, 0.5), 'not met');
    assert.equal(latencyVerdict(quantileDifference(base, base, 0.99), 0.5), 'met');
  });

  it('a p99 that rests on a few slow calls is not resolved, though its point difference is over the bound', () => {
    // 1 % of the calls 5 ms slower: the p99 is the slow value or the common one, depending on the draw.
    const slow = base.map((x, i) => (i % 100 === 37 ? x + 5 : x));
    const d = quantileDifference(base, slow, 0.99);
    assert.ok(d.diff > 0.5, JSON.stringify(d));
    assert.ok(d.lo <= 0.5 && d.hi > 0.5, JSON.stringify(d));
    assert.equal(latencyVerdict(d, 0.5), 'not resolved');
    // The p50 of the same samples is not moved by them.
    const p50 = quantileDifference(base, slow, 0.5);
    assert.equal(latencyVerdict(p50, 0.5), 'met');
  });

  it('one seed, one interval; unpaired or empty samples are an error', () => {
    const noisy = base.map((x, i) => x + ((i * 31) % 17) / 10);
    assert.deepEqual(quantileDifference(base, noisy, 0.99), quantileDifference(base, noisy, 0.99));
    assert.throws(() => quantileDifference(base, base.slice(1), 0.99), /paired/);
    assert.throws(() => quantileDifference([], [], 0.99), /paired/);
  });
});

describe('sidecar bench: samples that share their moment are drawn together', () => {
  it('a delay shared by a whole call widens the interval that draws calls, not the one that draws messages', () => {
    // 200 calls of 10 messages; one call in 50 arrives 4 ms late in every message, through one variant only.
    const calls = 200;
    const a: number[] = [];
    const b: number[] = [];
    for (let c = 0; c < calls; c++) {
      for (let m = 0; m < 10; m++) {
        const x = 1 + ((c * 10 + m) * 7919 % 1000) / 10000;
        a.push(x);
        b.push(c % 50 === 7 ? x + 4 : x);
      }
    }
    const messages = quantileDifference(a, b, 0.99);
    const byCall = quantileDifferences(a, b, [0.99], { block: 10 })[0]!;
    assert.ok(byCall.hi - byCall.lo > messages.hi - messages.lo, `${JSON.stringify(byCall)} vs ${JSON.stringify(messages)}`);
    assert.equal(latencyVerdict(byCall, 0.5), 'not resolved');
    assert.throws(() => quantileDifferences(a, b, [0.99], { block: 7 }), /blocks of 7/);
  });
});

describe('sidecar bench: a p99 of too few samples', () => {
  it('has no interval: unbounded, not resolved (a p99 of 20 calls is their maximum)', () => {
    const a = Array.from({ length: 20 }, (_, i) => 1 + i / 100);
    const d = quantileDifference(a, a.map((x) => x + 3), 0.99);
    assert.equal(d.lo, -Infinity);
    assert.equal(d.hi, Infinity);
    assert.equal(latencyVerdict(d, 0.5), 'not resolved');
    // The median of the same 20 has its interval.
    assert.equal(latencyVerdict(quantileDifference(a, a.map((x) => x + 3), 0.5), 0.5), 'not met');
  });
});
