// Imported, not the global: that is a lazy accessor on globalThis (Node 20) whose getter runs on
// every read, and the proxy reads the clock twice per event.
import { performance } from 'node:perf_hooks';

/** Default of `requestSpanDelayMs` (client and server), ms. */
export const DEFAULT_REQUEST_SPAN_DELAY_MS = 1000;

/** A request whose span is held back. `at`: when it was sent or received, epoch ms. */
export interface DeferredRequest {
  at: number;
}

/**
 * Read once: the `performance.timeOrigin` getter crosses into C++ on every read (Node 20), and it
 * is fixed for the life of the process.
 */
const TIME_ORIGIN = performance.timeOrigin;

/** Now as epoch milliseconds with sub-millisecond precision (what span start times take). */
export function epochNow(): number {
  return TIME_ORIGIN + performance.now();
}

/**
 * Requests in flight whose `request.sent` / `request.received` span is held back for `delayMs`:
 * a request answered within that time cannot be orphaned, so it costs no span at all, while one
 * still waiting is emitted then, stamped with its real time. Most calls of a fleet are answered
 * in milliseconds, and a span per call per side was most of the instrumentation's cost.
 *
 * One timer, armed only while something waits and unref'd so it never holds the process open.
 * Insertion order is arrival order, so a sweep stops at the first entry still young.
 */
export class DeferredRequests<E extends DeferredRequest> {
  private readonly items = new Set<E>();
  private timer: NodeJS.Timeout | undefined;

  /**
   * @param delayMs how long a request waits before its span is emitted, ms
   * @param onDue emits the span of a request still waiting after `delayMs`; must not throw
   */
  constructor(
    private readonly delayMs: number,
    private readonly onDue: (entry: E) => void,
  ) {}

  add(entry: E): void {
    this.items.add(entry);
    this.arm();
  }

  /** Forgets `entry` (answered, or emitted by its owner); true when it was waiting. */
  delete(entry: E): boolean {
    return this.items.delete(entry);
  }

  /**
   * Emits every waiting request now, as if its delay had passed: a process that exits must not
   * lose the requests it could not see answered (called by forceFlush/shutdown).
   */
  flush(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    for (const e of this.items) {
      this.items.delete(e);
      this.onDue(e);
    }
  }

  private arm(): void {
    if (this.timer !== undefined || this.items.size === 0) return;
    const oldest = this.items.values().next().value as E;
    const wait = Math.max(1, oldest.at + this.delayMs - epochNow());
    this.timer = setTimeout(() => this.sweep(), wait);
    this.timer.unref?.();
  }

  private sweep(): void {
    this.timer = undefined;
    const due = epochNow() - this.delayMs;
    for (const e of this.items) {
      if (e.at > due) break;
      this.items.delete(e);
      this.onDue(e);
    }
    this.arm();
  }
}
