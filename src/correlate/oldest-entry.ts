/**
 * The oldest entry of an insertion-ordered Map (the engine's least-recently-updated session
 * tables) without walking the holes that deletions leave at its front. V8 keeps a deleted Map
 * entry as a hole until the table is rehashed, which at a steady size happens only once half of
 * it is holes; a table evicted from its front (a detector at `--max-sessions`, each new session
 * evicting the oldest) made every `for (const e of map)` from the start walk tens of thousands of
 * holes: a quarter of the engine's CPU at the default 100,000 sessions. A Map iterator kept
 * between calls goes on from where it stopped (a Map iterator visits entries added after it was
 * made, and skips those deleted). Everything before its position was deleted, so the entry it
 * holds stays the oldest until that entry is deleted: the owner calls {@link deleted} for each
 * key it deletes from the map (a re-insert being a delete and a set).
 */
export class OldestEntry<V> {
  private it: Iterator<string> | undefined;
  /** The key of the oldest entry, as far as the deletions told; undefined: advance. */
  private head: string | undefined;

  constructor(private readonly map: Map<string, V>) {}

  /** The oldest entry whose key is not `skip`, or undefined when there is none. */
  first(skip: string): [string, V] | undefined {
    // A head deleted without being told (it would be a bug of the owner) is passed over all the same.
    while (this.head === undefined || !this.map.has(this.head)) {
      this.it ??= this.map.keys();
      const n = this.it.next();
      if (n.done === true) {
        // Nothing after the position: the map is empty. A finished iterator stays finished, so the
        // next call starts a new one (over whatever was added meanwhile).
        this.it = undefined;
        this.head = undefined;
        return undefined;
      }
      this.head = n.value;
    }
    if (this.head !== skip) return [this.head, this.map.get(this.head)!];
    // The oldest is the entry being written, which is the newest: the map holds only it, or it
    // was restored out of order. Rare, so walked.
    for (const e of this.map) if (e[0] !== skip) return e;
    return undefined;
  }

  /** `key` was deleted from the map (a re-insert too: it moved to the back). */
  deleted(key: string): void {
    if (this.head === key) this.head = undefined;
  }
}

/**
 * An insertion-ordered Map (a table kept least recently updated first, a re-insert being a delete
 * and a set) that finds its oldest entry with an {@link OldestEntry}: its own `delete` tells the
 * cursor, so no owner has to remember to.
 */
export class OrderedTable<V> extends Map<string, V> {
  // Undefined while Map's constructor runs (it adds nothing here, deletes nothing).
  private readonly cursor: OldestEntry<V> | undefined = new OldestEntry<V>(this);

  override delete(key: string): boolean {
    this.cursor?.deleted(key);
    return super.delete(key);
  }

  /** The oldest entry whose key is not `skip` (see {@link OldestEntry.first}). */
  oldest(skip: string): [string, V] | undefined {
    return this.cursor!.first(skip);
  }
}
