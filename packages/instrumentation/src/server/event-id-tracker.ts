/** Default of `maxTrackedEventIds`: event ids remembered per incarnation. */
export const DEFAULT_MAX_TRACKED_EVENT_IDS = 1024;

/**
 * The event ids one incarnation has sent, with the sequence each was given, bounded: past
 * `max` the oldest are forgotten and `evicted` counts them (then "not seen" means "unknown").
 */
export class EventIdTracker {
  private readonly ids = new Map<string, number>();
  /** Ids forgotten to stay within the bound. */
  evicted = 0;
  /** Highest sequence handed out by {@link nextObservedSeq}. */
  observedSeq = 0;

  constructor(private readonly max = DEFAULT_MAX_TRACKED_EVENT_IDS) {}

  /** The sequence recorded for `id`, or undefined when not (or no longer) tracked. */
  get(id: string): number | undefined {
    return this.ids.get(id);
  }

  /** Records `id` (with its sequence, 0 when unknown); no-op if already tracked. */
  add(id: string, seq: number): void {
    if (this.ids.has(id)) return;
    if (this.ids.size >= this.max) {
      const oldest = this.ids.keys().next();
      if (!oldest.done) {
        this.ids.delete(oldest.value);
        this.evicted++;
      }
    }
    this.ids.set(id, seq);
  }

  nextObservedSeq(): number {
    return ++this.observedSeq;
  }

  /** true: tracked; false: certainly never sent; undefined: can't tell (ids were forgotten). */
  knows(id: string): boolean | undefined {
    if (this.ids.has(id)) return true;
    return this.evicted === 0 ? false : undefined;
  }
}
