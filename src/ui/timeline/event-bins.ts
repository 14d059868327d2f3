import type { TimelineEvent } from './timeline-model.js';

/** Most events drawn as single ticks on one lane; past it, the ordinary ones are binned. */
export const MAX_TICKS_PER_LANE = 120;
/** Width of one bin, in drawing units (the SVG is 1200 wide). */
export const BIN_WIDTH = 6;
/**
 * Most dropped or replayed events kept as ticks on one lane: past it they are binned too, in red
 * bins, so a session where thousands were dropped still renders at a bounded size.
 */
export const MAX_MARKED_TICKS_PER_LANE = 300;

/** Several ordinary events that fall into one bin of the x axis. */
export interface EventBin {
  lane: string;
  x: number;
  count: number;
  fromMs: number;
  toMs: number;
  firstId: string;
  lastId: string;
  minSeq?: number;
  maxSeq?: number;
  /** How many of them the client's dedup dropped. */
  dropped: number;
}

/** What a lane draws: events as ticks, the rest of its events as bins. */
export interface LaneEvents {
  ticks: TimelineEvent[];
  bins: EventBin[];
}

/** Worth a tick of its own even among thousands: dropped, replayed, regressed, cited. */
export function isMarked(e: TimelineEvent): boolean {
  return e.dropped || e.regressed || e.cited || e.event.replayed === true;
}

/**
 * Splits a lane's events into ticks and bins. Up to {@link MAX_TICKS_PER_LANE} events every
 * event is a tick; above, marked events and each incarnation's first and last stay ticks and
 * the others are counted into bins {@link BIN_WIDTH} wide, so the picture keeps its marks and
 * its density whatever the count. Past {@link MAX_MARKED_TICKS_PER_LANE} drops or replays, those
 * are binned as well (a bin holding drops is drawn red).
 */
export function binLaneEvents(events: readonly TimelineEvent[], x: (ms: number) => number): LaneEvents {
  if (events.length <= MAX_TICKS_PER_LANE) return { ticks: [...events], bins: [] };
  const edges = new Set<TimelineEvent>();
  const firstOf = new Map<string, TimelineEvent>();
  const lastOf = new Map<string, TimelineEvent>();
  for (const e of events) {
    const inc = e.event.incarnation ?? '';
    if (!firstOf.has(inc)) firstOf.set(inc, e);
    lastOf.set(inc, e);
  }
  for (const e of firstOf.values()) edges.add(e);
  for (const e of lastOf.values()) edges.add(e);

  // Regressions and cited events are few by nature; drops and replays can be the whole session.
  const bulky = events.filter((e) => (e.dropped || e.event.replayed === true) && !e.regressed && !e.cited).length;
  const keep = (e: TimelineEvent): boolean => edges.has(e) || e.regressed || e.cited || (isMarked(e) && bulky <= MAX_MARKED_TICKS_PER_LANE);
  const ticks: TimelineEvent[] = [];
  const bins = new Map<number, EventBin>();
  for (const e of events) {
    if (keep(e)) {
      ticks.push(e);
      continue;
    }
    const i = Math.floor(x(e.event.timeMs) / BIN_WIDTH);
    let b = bins.get(i);
    if (b === undefined) {
      b = { lane: e.lane, x: i * BIN_WIDTH, count: 0, fromMs: e.event.timeMs, toMs: e.event.timeMs, firstId: e.event.eventId, lastId: e.event.eventId, dropped: 0 };
      bins.set(i, b);
    }
    b.count++;
    if (e.dropped) b.dropped++;
    b.toMs = e.event.timeMs;
    b.lastId = e.event.eventId;
    const seq = e.event.seq;
    if (typeof seq === 'number' && Number.isFinite(seq)) {
      b.minSeq = Math.min(b.minSeq ?? seq, seq);
      b.maxSeq = Math.max(b.maxSeq ?? seq, seq);
    }
  }
  return { ticks, bins: [...bins.values()].sort((a, b) => a.x - b.x) };
}
