/** Options of {@link AuthThrottle}. */
export interface AuthThrottleOptions {
  /**
   * Wrong credentials one client address may present per minute; the next request from it is
   * refused with 429 until the minute is over. 0 turns the throttle off. Default 20.
   */
  failuresPerMinute?: number;
  /** Client addresses remembered at once; the oldest is forgotten first. Default 10,000. */
  maxAddresses?: number;
  /** Clock, epoch ms; default `Date.now`. */
  now?: () => number;
}

/** Default of {@link AuthThrottleOptions.failuresPerMinute}. */
export const DEFAULT_AUTH_FAILURES_PER_MINUTE = 20;
/** Default of {@link AuthThrottleOptions.maxAddresses}. */
export const DEFAULT_AUTH_THROTTLE_ADDRESSES = 10_000;
const WINDOW_MS = 60_000;

interface Window {
  startMs: number;
  failures: number;
}

/**
 * Slows token guessing on the API and incident-view port: counts wrong credentials *presented*
 * (a missing credential is not a guess) per client address in fixed one-minute windows. Bounded:
 * past `maxAddresses` the address seen longest ago is forgotten, so a spray from many addresses
 * costs memory only up to the bound (and such a spray is what the token's length is for).
 */
export class AuthThrottle {
  private readonly limit: number;
  private readonly maxAddresses: number;
  private readonly now: () => number;
  private readonly windows = new Map<string, Window>();

  constructor(options: AuthThrottleOptions = {}) {
    this.limit = options.failuresPerMinute ?? DEFAULT_AUTH_FAILURES_PER_MINUTE;
    this.maxAddresses = Math.max(1, options.maxAddresses ?? DEFAULT_AUTH_THROTTLE_ADDRESSES);
    this.now = options.now ?? Date.now;
  }

  /** Seconds until `address` may try again (at least 1), or 0 when it is not throttled. */
  retryAfterSeconds(address: string): number {
    if (this.limit <= 0) return 0;
    const w = this.windows.get(address);
    if (w === undefined || w.failures < this.limit) return 0;
    const left = w.startMs + WINDOW_MS - this.now();
    if (left <= 0) {
      this.windows.delete(address);
      return 0;
    }
    return Math.max(1, Math.ceil(left / 1000));
  }

  /** Counts one wrong credential from `address`. */
  failed(address: string): void {
    if (this.limit <= 0) return;
    const t = this.now();
    const w = this.windows.get(address);
    if (w !== undefined && t - w.startMs < WINDOW_MS) {
      w.failures++;
      return;
    }
    if (w !== undefined) this.windows.delete(address);
    else if (this.windows.size >= this.maxAddresses) {
      const oldest = this.windows.keys().next();
      if (!oldest.done) this.windows.delete(oldest.value);
    }
    // Re-inserted so the map stays in order of each window's start: the first key is the oldest.
    this.windows.set(address, { startMs: t, failures: 1 });
  }

  /** Addresses currently remembered (for tests and the bound). */
  get size(): number {
    return this.windows.size;
  }
}
