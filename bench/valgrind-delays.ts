/**
 * The instrumentation's wall-clock bounds under valgrind, scaled by the slowdown.
 *
 * Under valgrind node runs ~50 times slower (about 0.4 s of wall time per call with four in
 * flight, bench/instruction-count.ts), and a loaded machine slows it further.
 * Left at their defaults, the bounds that decide whether a call emits spans are wall time: a
 * load-dependent share of calls outlived `requestSpanDelayMs` (1 s) and exported the
 * `request.sent`/`request.received`/`request.settled` spans and the event history that the same
 * calls, answered in milliseconds in a real run, never export; independent runs of one variant
 * differed by 32-61 %, every outlier upward (issue 28). So every bound is multiplied by
 * {@link valgrindSlowdown}: the counted calls are held back and decided as in real time. The
 * child checks it (bench/one-variant.ts): it reports its slowest counted call and how many
 * counted calls outlived the scaled delay, and the bench prints both per row.
 */

/** `requestSpanDelayMs`'s default (packages/instrumentation/src/common/deferred-requests.ts), ms. */
const REQUEST_SPAN_DELAY_MS = 1000;
/** The client's `deliveryTimeoutMs` default (packages/instrumentation/src/client/client-core.ts), ms. */
const DELIVERY_TIMEOUT_MS = 2000;

/**
 * The factor the bounds are scaled by: INSTR_SLOWDOWN, default 100 (twice valgrind's ~50x, for
 * a loaded machine). A whole number >= 1; anything else is an error.
 */
export function valgrindSlowdown(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.INSTR_SLOWDOWN ?? '100';
  if (!/^[1-9][0-9]{0,5}$/.test(raw)) throw new Error(`INSTR_SLOWDOWN=${JSON.stringify(raw)}: expected a whole number >= 1 (the factor valgrind's wall-clock bounds are scaled by)`);
  return Number(raw);
}

/** The bounds a variant runs with under valgrind, ms. */
export interface ScaledDelays {
  slowdown: number;
  /** `requestSpanDelayMs` of both sides (explicit and `/register`). */
  requestSpanDelayMs: number;
  /** The client's `deliveryTimeoutMs` (explicit variants only: `/register` has no variable for it). */
  deliveryTimeoutMs: number;
}

/** The defaults times {@link valgrindSlowdown}. */
export function scaledDelays(env: NodeJS.ProcessEnv = process.env): ScaledDelays {
  const slowdown = valgrindSlowdown(env);
  return { slowdown, requestSpanDelayMs: REQUEST_SPAN_DELAY_MS * slowdown, deliveryTimeoutMs: DELIVERY_TIMEOUT_MS * slowdown };
}
