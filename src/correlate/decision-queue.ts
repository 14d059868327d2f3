/**
 * Sessions waiting for their decision, in order of the time they became pending
 * (`pendingSinceMs`), so that a tick stops at the first one not yet due. A restore (or a clock
 * step back) can break that order: the queue then knows it, scans to the end, and is in order
 * again once a scan saw it so.
 */
export class DecisionQueue {
  private readonly keys = new Set<string>();
  /** The latest `since` added, and whether the queue is out of that order. */
  private last = -Infinity;
  private unordered = false;

  has(key: string): boolean {
    return this.keys.has(key);
  }

  delete(key: string): void {
    this.keys.delete(key);
  }

  /** The keys, oldest first (a copy: deciding deletes). */
  snapshot(): string[] {
    return [...this.keys];
  }

  /** Queues `key`, pending since `since` ms; a key already queued keeps its place. */
  add(key: string, since: number): void {
    if (this.keys.has(key)) return;
    if (since < this.last) this.unordered = true;
    else this.last = since;
    this.keys.add(key);
  }

  /** Moves `key` to the back, pending since `since` ms (its window restarted). */
  requeue(key: string, since: number): void {
    this.keys.delete(key);
    this.add(key, since);
  }

  /**
   * Hands `decide` every key whose window elapsed at `now`. `sinceOf` gives a key's pending time,
   * undefined when its session is gone (the key is dropped). Returns false when `over` stopped
   * the scan (call again for the rest).
   */
  scan(now: number, windowMs: number, sinceOf: (key: string) => number | undefined, decide: (key: string) => void, over: () => boolean): boolean {
    let ordered = true;
    let prev = -Infinity;
    for (const key of this.keys) {
      if (over()) return false;
      const since = sinceOf(key);
      if (since === undefined) {
        this.keys.delete(key);
        continue;
      }
      if (now - since >= windowMs) decide(key);
      else if (!this.unordered) break;
      else {
        if (since < prev) ordered = false;
        prev = since;
      }
    }
    if (this.unordered && ordered) {
      this.unordered = false;
      this.last = prev;
    }
    return true;
  }
}
