import { performance } from 'node:perf_hooks';

/** One pending deadline of {@link Deadlines}; `cancel` it when it no longer matters. */
export interface Deadline {
  /** Forgets the deadline: its callback will not run. Idempotent. */
  cancel(): void;
}

/** How {@link Deadlines} reaches the clock and the event loop (injectable for tests). */
export interface DeadlineClock {
  /** Monotonic now, ms. Default `performance.now()`. */
  now(): number;
  /** Runs `fn` once after `ms`, not keeping the process alive. Default an unref'd `setTimeout`. */
  schedule(fn: () => void, ms: number): unknown;
  /** Stops a `schedule` handle. Default `clearTimeout`. */
  unschedule(handle: unknown): void;
}

/** The longest wait a Node timer takes. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const NODE_CLOCK: DeadlineClock = {
  now: () => performance.now(),
  schedule: (fn, ms) => setTimeout(fn, ms).unref(),
  unschedule: (h) => clearTimeout(h as NodeJS.Timeout),
};

/** A deadline's place in the heap; -1 once it ran or was cancelled. */
class Entry implements Deadline {
  index = -1;

  constructor(
    private readonly owner: Deadlines,
    readonly at: number,
    /** Tie-break: of two due at the same time, the one set first runs first (as Node's timers do). */
    readonly seq: number,
    readonly fn: (arg: unknown) => void,
    readonly arg: unknown,
  ) {}

  cancel(): void {
    if (this.index >= 0) this.owner.remove(this);
  }
}

/**
 * The proxy's timeouts (connect, status line, stream idle, `--guard` hold) in one binary heap
 * under a single event-loop timer. Each exchange set two or three Node timers of its own and
 * cleared them within milliseconds: with a few calls in flight Node's list for each duration
 * emptied and was rebuilt call after call (a priority-queue update and a native call to re-arm
 * libuv's timer each time), a per-call cost a bare pipe does not pay. Here a deadline is an
 * object and a heap insertion; the loop's timer is re-armed only when an earlier deadline comes,
 * and a cancelled head leaves it armed (it wakes once, finds nothing due, and re-arms for the new
 * head). A callback runs no earlier than its `ms` (within the 1 ms the loop's clock may lag
 * `performance.now()`, as Node's timers) and callbacks due together run in the order they were set.
 */
export class Deadlines {
  private readonly heap: Entry[] = [];
  private handle: unknown;
  /** When the armed loop timer fires (`Infinity`: none armed). */
  private armedAt = Infinity;
  private seq = 0;

  constructor(private readonly clock: DeadlineClock = NODE_CLOCK) {}

  /** Deadlines pending. */
  get size(): number {
    return this.heap.length;
  }

  /** Runs `fn(arg)` once `ms` have passed, unless cancelled first. */
  add<A>(ms: number, fn: (arg: A) => void, arg: A): Deadline {
    const e = new Entry(this, this.clock.now() + ms, this.seq++, fn as (arg: unknown) => void, arg);
    const heap = this.heap;
    e.index = heap.length;
    heap.push(e);
    this.up(e.index);
    if (e.at < this.armedAt) this.arm(e.at);
    return e;
  }

  /** @internal used by `Deadline.cancel`. */
  remove(e: Entry): void {
    const heap = this.heap;
    const i = e.index;
    e.index = -1;
    const last = heap.pop()!;
    if (last === e) return;
    heap[i] = last;
    last.index = i;
    this.down(i);
    this.up(last.index);
  }

  private arm(at: number): void {
    if (this.handle !== undefined) this.clock.unschedule(this.handle);
    this.armedAt = at;
    // Node's timers take at most 2^31-1 ms (a longer one fires after 1 ms): a longer wait re-arms.
    this.handle = this.clock.schedule(() => this.fire(), Math.min(MAX_TIMER_MS, Math.max(1, Math.ceil(at - this.clock.now()))));
  }

  private fire(): void {
    this.handle = undefined;
    this.armedAt = Infinity;
    // The loop's clock may run up to a millisecond behind performance.now(): within that, due.
    const due = this.clock.now() + 1;
    try {
      while (this.heap.length > 0 && this.heap[0]!.at <= due) {
        const e = this.heap[0]!;
        this.remove(e);
        e.fn(e.arg);
      }
    } finally {
      if (this.heap.length > 0 && this.heap[0]!.at < this.armedAt) this.arm(this.heap[0]!.at);
    }
  }

  private before(a: Entry, b: Entry): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private up(i: number): void {
    const heap = this.heap;
    const e = heap[i]!;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = heap[p]!;
      if (!this.before(e, parent)) break;
      heap[i] = parent;
      parent.index = i;
      i = p;
    }
    heap[i] = e;
    e.index = i;
  }

  private down(i: number): void {
    const heap = this.heap;
    const n = heap.length;
    const e = heap[i]!;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && this.before(heap[r]!, heap[l]!) ? r : l;
      const child = heap[c]!;
      if (!this.before(child, e)) break;
      heap[i] = child;
      child.index = i;
      i = c;
    }
    heap[i] = e;
    e.index = i;
  }
}
