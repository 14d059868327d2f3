import { hashId, IdTable } from '../common/id-table.js';

/** Default of `maxTrackedEventIds`: event ids remembered per incarnation. */
export const DEFAULT_MAX_TRACKED_EVENT_IDS = 1024;

/**
 * The event ids one incarnation has sent, with the sequence each was given, bounded: past
 * `max` the oldest are forgotten and `evicted` counts them (then "not seen" means "unknown").
 * Ids are kept as 53-bit hashes in typed arrays ({@link IdTable}): an id string kept per event
 * would keep the text of the frame it was cut from alive, and the host's GC would copy it into
 * the old generation.
 */
export class EventIdTracker {
  private readonly ids: IdTable;
  /** Highest sequence handed out by {@link nextObservedSeq}. */
  observedSeq = 0;

  constructor(max = DEFAULT_MAX_TRACKED_EVENT_IDS) {
    this.ids = new IdTable(max);
  }

  /** Ids forgotten to stay within the bound. */
  get evicted(): number {
    return this.ids.evicted;
  }

  /** The sequence recorded for the id of `hash` ({@link hashId}), or undefined when not (or no longer) tracked. */
  get(hash: number): number | undefined {
    return this.ids.get(hash);
  }

  /** Records the id of `hash` (with its sequence, 0 when unknown); no-op if already tracked. */
  add(hash: number, seq: number): void {
    if (this.ids.has(hash)) return;
    this.ids.set(hash, seq);
  }

  nextObservedSeq(): number {
    return ++this.observedSeq;
  }

  /** true: tracked; false: certainly never sent; undefined: can't tell (ids were forgotten). */
  knows(id: string): boolean | undefined {
    if (this.ids.has(hashId(id))) return true;
    return this.ids.evicted === 0 ? false : undefined;
  }
}
