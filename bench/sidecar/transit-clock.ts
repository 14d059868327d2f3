/**
 * One clock for the sidecar bench's processes on one machine: milliseconds since the epoch at
 * sub-millisecond resolution. Each process took its origin from the system clock once, so two
 * processes' readings differ by a constant offset at most; the bench compares only transits that
 * the same client and server processes measured through each proxy, where that offset cancels.
 */
const ORIGIN = performance.timeOrigin;

export function clock(): number {
  return ORIGIN + performance.now();
}
