/**
 * A Map that keeps at most `limit` entries, evicting the least recently used. Every piece of
 * per-session state the client side keeps goes through one, so a hostile or long-lived peer
 * cannot grow memory.
 */
export class BoundedMap<K, V> {
  private readonly map = new Map<K, V>();
  /** Entries evicted for room. */
  evicted = 0;

  constructor(readonly limit: number) {}

  get size(): number {
    return this.map.size;
  }

  /**
   * The most recently used key, while `hasNewest`: most reads are of the session just used
   * (every request of one client), and re-inserting the newest key would change nothing.
   */
  private newest: K | undefined;
  private hasNewest = false;

  /** Reads and marks as recently used. */
  get(key: K): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined && !(this.hasNewest && this.newest === key)) {
      this.map.delete(key);
      this.map.set(key, v);
      this.newest = key;
      this.hasNewest = true;
    }
    return v;
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  set(key: K, value: V): void {
    if (this.map.has(key)) this.map.delete(key);
    else if (this.map.size >= this.limit && this.limit > 0) {
      const oldest = this.map.keys().next();
      if (!oldest.done) {
        this.map.delete(oldest.value);
        this.evicted++;
      }
    }
    if (this.limit > 0) {
      this.map.set(key, value);
      this.newest = key;
      this.hasNewest = true;
    }
  }

  /** The value under `key`, created by `make` when absent. */
  getOrCreate(key: K, make: () => V): V {
    let v = this.get(key);
    if (v === undefined) {
      v = make();
      this.set(key, v);
    }
    return v;
  }

  delete(key: K): boolean {
    if (this.hasNewest && this.newest === key) {
      this.hasNewest = false;
      this.newest = undefined;
    }
    return this.map.delete(key);
  }
}
