/** Maps epoch ms onto the drawing's x axis, linearly. */
export interface TimeScale {
  t0: number;
  t1: number;
  x0: number;
  x1: number;
  x(ms: number): number;
}

/** Scale over `[t0, t1]` (widened to 1 ms if empty) drawn from `x0` to `x1`. */
export function timeScale(t0: number, t1: number, x0: number, x1: number): TimeScale {
  const span = t1 > t0 ? t1 - t0 : 1;
  const k = (x1 - x0) / span;
  return { t0, t1: t0 + span, x0, x1, x: (ms) => x0 + (Math.min(Math.max(ms, t0), t0 + span) - t0) * k };
}

const STEPS_MS = [1, 2, 5, 10, 20, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 21_600_000, 43_200_000, 86_400_000];

/** Offsets from t0 (ms) for about `target` axis ticks at a round step. */
export function axisTicks(scale: TimeScale, target = 8): number[] {
  const span = scale.t1 - scale.t0;
  const step = STEPS_MS.find((s) => span / s <= target) ?? Math.ceil(span / target / 86_400_000) * 86_400_000;
  const out: number[] = [];
  for (let o = 0; o <= span; o += step) out.push(o);
  return out;
}
