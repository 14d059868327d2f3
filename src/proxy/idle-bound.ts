import { performance } from 'node:perf_hooks';
import type { Deadline, Deadlines } from './deadlines.js';

/**
 * The `--stream-idle-timeout-ms` bound on one answer body: `onIdle` runs once no chunk came for
 * `ms`. A chunk costs one clock read: the one deadline, when due, is set again for what is left of
 * the bound after the last chunk. (Refreshing a timer on every chunk re-linked Node's timer list
 * and read libuv's clock through a binding each time, from a second `data` listener.) The
 * deadline is one of the proxy's shared {@link Deadlines}, not a Node timer of its own.
 */
export class IdleBound {
  private last = performance.now();
  private deadline: Deadline | undefined;

  constructor(
    private readonly ms: number,
    private readonly onIdle: () => void,
    private readonly deadlines: Deadlines,
  ) {
    this.arm(ms);
  }

  /** A chunk came. */
  touch(): void {
    this.last = performance.now();
  }

  clear(): void {
    this.deadline?.cancel();
    this.deadline = undefined;
  }

  private arm(ms: number): void {
    this.deadline = this.deadlines.add(ms, due, this);
  }

  /** @internal the deadline is due: idle, or set again for the rest of the bound. */
  due(): void {
    if (this.deadline === undefined) return;
    const left = this.last + this.ms - performance.now();
    if (left >= 1) {
      this.arm(left);
      return;
    }
    this.deadline = undefined;
    this.onIdle();
  }
}

function due(b: IdleBound): void {
  b.due();
}
