/**
 * The `--stream-idle-timeout-ms` bound on one answer body: `onIdle` runs once no chunk came for
 * `ms`. A chunk costs one clock read: the one timer, when due, re-arms itself for what is left of
 * the bound after the last chunk. (Refreshing the timer on every chunk re-linked Node's timer list
 * and read libuv's clock through a binding each time, from a second `data` listener.)
 */
export class IdleBound {
  private last = performance.now();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ms: number,
    private readonly onIdle: () => void,
  ) {
    this.arm(ms);
  }

  /** A chunk came. */
  touch(): void {
    this.last = performance.now();
  }

  clear(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(ms: number): void {
    this.timer = setTimeout(due, ms, this);
    this.timer.unref();
  }

  /** @internal the timer is due: idle, or re-armed for the rest of the bound. */
  due(): void {
    if (this.timer === undefined) return;
    const left = this.last + this.ms - performance.now();
    if (left >= 1) {
      this.arm(left);
      return;
    }
    this.timer = undefined;
    this.onIdle();
  }
}

function due(b: IdleBound): void {
  b.due();
}
