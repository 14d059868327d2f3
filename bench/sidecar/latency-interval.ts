/**
 * How sure the sidecar bench is of a latency it adds: a call's time through a proxy is mostly the
 * client's and the server's (SDK, GC pauses, scheduling), so the p99 of a few hundred calls moves
 * by milliseconds between runs on an idle machine, and the difference of two such p99s alone
 * could not say whether 0.5 ms was kept or exceeded. The latency phase interleaves the variants
 * call by call, so call i of each variant sampled the same moment of the machine: a paired
 * percentile bootstrap (resampling those moments) gives the difference with an interval, and the
 * verdict is 'not resolved' while the interval holds the bound.
 */
import { seededRandom } from '../resample.js';

/** Samples a quantile needs beyond it for an interval: fewer, and the interval is unbounded (not resolved). */
export const MIN_BEYOND = 10;

/** The q-quantile of sorted `s` by nearest rank, as this bench printed its percentiles before (bench/resample.ts interpolates). */
function sortedQuantile(s: Float64Array, q: number): number {
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

/** The q-quantile of `xs` (0 <= q <= 1; nearest rank). */
export function quantile(xs: readonly number[], q: number): number {
  return sortedQuantile(Float64Array.from(xs).sort(), q);
}

/** A difference of quantiles and its bootstrap interval, in the samples' unit. */
export interface QuantileDifference {
  /** quantile(b) - quantile(a) on the samples as measured. */
  diff: number;
  /** The interval's bounds (`confidence`, two-sided, percentile bootstrap). */
  lo: number;
  hi: number;
}

/**
 * quantile(b, q) - quantile(a, q) for paired samples (a[i] and b[i] taken at the same moment),
 * with a paired percentile bootstrap interval: `resamples` (default 2,000) draws of n moments with
 * replacement, `confidence` (default 0.95), `seed` (default bench/resample.ts's). Throws when the samples are
 * unpaired or empty: a bench's error, not a result.
 */
export function quantileDifference(
  a: readonly number[],
  b: readonly number[],
  q: number,
  opts: { resamples?: number; confidence?: number; seed?: number } = {},
): QuantileDifference {
  return quantileDifferences(a, b, [q], opts)[0]!;
}

/**
 * {@link quantileDifference} for several quantiles at once, from the same draws (one sort of each
 * per draw). `block` (default 1): the samples come in consecutive groups of that size that share
 * their moment (the messages of one call: a client that fell behind delays all the rest), and a
 * draw takes whole groups; drawing such samples one by one would read their shared delays as
 * independent and give an interval far too narrow.
 */
export function quantileDifferences(
  a: readonly number[],
  b: readonly number[],
  qs: readonly number[],
  opts: { resamples?: number; confidence?: number; seed?: number; block?: number } = {},
): QuantileDifference[] {
  const n = a.length;
  const block = opts.block ?? 1;
  if (n === 0 || b.length !== n || n % block !== 0) throw new Error(`paired samples needed, in blocks of ${block}: ${a.length} and ${b.length}`);
  const resamples = opts.resamples ?? 2000;
  const confidence = opts.confidence ?? 0.95;
  // The benches' fixed-seed generator: one run's samples always give the same interval.
  const rand = seededRandom(opts.seed);
  const ra = new Float64Array(n);
  const rb = new Float64Array(n);
  const diffs = qs.map(() => new Float64Array(resamples));
  const blocks = n / block;
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < n; i += block) {
      const k = Math.floor(rand() * blocks) * block;
      for (let j = 0; j < block; j++) {
        ra[i + j] = a[k + j]!;
        rb[i + j] = b[k + j]!;
      }
    }
    ra.sort();
    rb.sort();
    qs.forEach((q, j) => (diffs[j]![r] = sortedQuantile(rb, q) - sortedQuantile(ra, q)));
  }
  const tail = (1 - confidence) / 2;
  const sa = Float64Array.from(a).sort();
  // A quantile with fewer than MIN_BEYOND samples past it (a p99 of 20 calls is their maximum) has
  // no interval a bootstrap can give: the draws never exceed the largest sample.
  const unbounded = (q: number): boolean => n * (1 - q) < MIN_BEYOND;
  const sb = Float64Array.from(b).sort();
  return qs.map((q, j) => {
    const d = diffs[j]!.sort();
    const diff = sortedQuantile(sb, q) - sortedQuantile(sa, q);
    if (unbounded(q)) return { diff, lo: -Infinity, hi: Infinity };
    return { diff, lo: d[Math.floor(tail * (resamples - 1))]!, hi: d[Math.ceil((1 - tail) * (resamples - 1))]! };
  });
}

/** Whether an added latency kept `bound`: 'met' when all of its interval is at or under it, 'not met' when all is over. */
export type LatencyVerdict = 'met' | 'not met' | 'not resolved';

export function latencyVerdict(d: QuantileDifference, bound: number): LatencyVerdict {
  if (d.hi <= bound) return 'met';
  if (d.lo > bound) return 'not met';
  return 'not resolved';
}
