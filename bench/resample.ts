/**
 * Quantiles and percentile-bootstrap intervals for the benches' figures. The resampling uses a
 * fixed-seed generator, so the same figures always print the same interval.
 */

/** Linear-interpolated quantile `q` (0..1) of ascending `sorted`. */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  const i = (sorted.length - 1) * q;
  const lo = Math.floor(i);
  return sorted[lo]! + (sorted[Math.min(lo + 1, sorted.length - 1)]! - sorted[lo]!) * (i - lo);
}

/** Median of `values` (any order). */
export function median(values: readonly number[]): number {
  return quantile([...values].sort((x, y) => x - y), 0.5);
}

/** xorshift32 from a fixed seed: deterministic, and plenty for picking indices. Values in [0, 1). */
export function seededRandom(seed = 0x9e3779b9): () => number {
  let s = seed | 0;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 0x100000000;
  };
}

/**
 * Percentile-bootstrap 90 % interval of `median(b) / median(a) - 1`, each list resampled with
 * replacement on its own (two independent samples: runs of two variants, not pairs).
 */
export function ratioOfMediansInterval(a: readonly number[], b: readonly number[], resamples = 10_000): { lo: number; hi: number } {
  const rand = seededRandom();
  const pick = (xs: readonly number[], into: number[]): number => {
    for (let i = 0; i < xs.length; i++) into[i] = xs[Math.floor(rand() * xs.length)]!;
    into.sort((x, y) => x - y);
    return quantile(into, 0.5);
  };
  const sa = new Array<number>(a.length);
  const sb = new Array<number>(b.length);
  const out = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) out[r] = pick(b, sb) / pick(a, sa) - 1;
  out.sort();
  return { lo: out[Math.floor(resamples * 0.05)]!, hi: out[Math.ceil(resamples * 0.95) - 1]! };
}
