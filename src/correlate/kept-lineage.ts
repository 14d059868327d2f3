import type { LineageEvent, LineageIncarnation, LineageRequest, LineageResume, SessionLineage } from '../model/lineage.js';

/**
 * Bounds of the lineage kept with a session's findings once the correlator lets go of the session
 * (compaction, expiry, eviction). The lists other than events are already bounded in the
 * correlator by the same numbers (`maxIncarnationsPerSession`, `maxResumesPerSession`,
 * `maxRequestsPerSession`); these hold them when several kept lineages of one session are merged.
 */
export interface KeptLineageBounds {
  /** Events kept (`--max-kept-events`, default 200). */
  maxEvents: number;
  /** Incarnations kept, the oldest cut first. Default 16. */
  maxIncarnations: number;
  /** Resumes kept, the oldest cut first. Default 64. */
  maxResumes: number;
  /** Requests kept: settled ones cut first, oldest first. Default 256. */
  maxRequests: number;
}

/** Default {@link KeptLineageBounds}. */
export const DEFAULT_KEPT_LINEAGE_BOUNDS: Readonly<KeptLineageBounds> = Object.freeze({
  maxEvents: 200,
  maxIncarnations: 16,
  maxResumes: 64,
  maxRequests: 256,
});

/** Events on either side of a resume (on the resume's side, by time) that explain it. */
const AROUND_RESUME = 3;

const eventKey = (e: LineageEvent): string => `${e.side}|${e.spanId}|${e.eventId}`;

/**
 * `l` cut to `bounds`. Events that explain a finding are kept first: the spans the findings cite
 * (`cited`: span ids), events the client's dedup dropped, replays, events where a side's
 * sequence went backwards, each incarnation's first and last event on each side, and the
 * {@link AROUND_RESUME} events before and after each resume. Ordinary events are cut first,
 * the oldest first; if the kept ones alone exceed the bound, the oldest of those go too.
 * `eventsOmitted` adds what was cut. Returns a new object; `l` is not changed.
 */
export function boundLineage(l: SessionLineage, bounds: KeptLineageBounds = DEFAULT_KEPT_LINEAGE_BOUNDS, cited: ReadonlySet<string> = new Set()): SessionLineage {
  const out: SessionLineage = { ...l };
  out.incarnations = l.incarnations.slice(-bounds.maxIncarnations);
  out.resumes = l.resumes.slice(-bounds.maxResumes);
  if (l.requests.length > bounds.maxRequests) {
    const over = l.requests.length - bounds.maxRequests;
    let settledCut = 0;
    const cut = new Set<LineageRequest>();
    for (const r of l.requests) if (settledCut < over && r.state === 'settled' && cut.add(r)) settledCut++;
    const rest = l.requests.filter((r) => !cut.has(r));
    out.requests = rest.slice(-bounds.maxRequests);
  }
  if (l.events.length <= bounds.maxEvents) return out;
  const precious = preciousEvents(l.events, l.resumes, cited);
  const ordinary = l.events.filter((e) => !precious.has(e));
  const keep = new Set<LineageEvent>();
  // The most recent precious ones when even they do not fit; then the most recent ordinary ones.
  const preciousList = l.events.filter((e) => precious.has(e));
  for (const e of preciousList.slice(-bounds.maxEvents)) keep.add(e);
  const room = bounds.maxEvents - keep.size;
  if (room > 0) for (const e of ordinary.slice(-room)) keep.add(e);
  out.events = l.events.filter((e) => keep.has(e));
  out.eventsOmitted = (l.eventsOmitted ?? 0) + (l.events.length - out.events.length);
  return out;
}

function preciousEvents(events: readonly LineageEvent[], resumes: readonly LineageResume[], cited: ReadonlySet<string>): Set<LineageEvent> {
  const p = new Set<LineageEvent>();
  const bySide = new Map<string, LineageEvent[]>();
  for (const e of events) {
    if (cited.has(e.spanId) || e.delivery === 'dropped' || e.replayed === true) p.add(e);
    let list = bySide.get(e.side);
    if (list === undefined) bySide.set(e.side, (list = []));
    list.push(e);
  }
  for (const [side, list] of bySide) {
    const sorted = [...list].sort((a, b) => a.timeMs - b.timeMs);
    const firstOfInc = new Map<string, LineageEvent>();
    const lastOfInc = new Map<string, LineageEvent>();
    let prevSeq: number | undefined;
    for (const e of sorted) {
      const inc = e.incarnation ?? '';
      if (!firstOfInc.has(inc)) firstOfInc.set(inc, e);
      lastOfInc.set(inc, e);
      if (e.seq !== undefined) {
        if (prevSeq !== undefined && e.seq < prevSeq) p.add(e);
        prevSeq = e.seq;
      }
    }
    for (const e of firstOfInc.values()) p.add(e);
    for (const e of lastOfInc.values()) p.add(e);
    for (const r of resumes) {
      if (r.side !== side) continue;
      let i = sorted.findIndex((e) => e.timeMs >= r.timeMs);
      if (i < 0) i = sorted.length;
      for (const e of sorted.slice(Math.max(0, i - AROUND_RESUME), i + AROUND_RESUME)) p.add(e);
    }
  }
  return p;
}

/**
 * One lineage of a session from an older and a newer one (a session compacted, woken by a late
 * span and compacted again; or the kept lineage and what the correlator holds now): incarnations
 * and requests by id (the newer's facts win, the older's fill what the newer lacks), events and
 * resumes once each, older first; then cut to `bounds`.
 */
export function mergeLineages(older: SessionLineage, newer: SessionLineage, bounds: KeptLineageBounds = DEFAULT_KEPT_LINEAGE_BOUNDS, cited?: ReadonlySet<string>): SessionLineage {
  const incs = new Map<string, LineageIncarnation>();
  for (const i of older.incarnations) incs.set(i.incarnation, i);
  for (const i of newer.incarnations) {
    const o = incs.get(i.incarnation);
    incs.set(i.incarnation, o === undefined ? i : { ...o, ...i, eventCount: Math.max(o.eventCount, i.eventCount) });
  }
  const seenEvents = new Set<string>();
  const events: LineageEvent[] = [];
  for (const e of [...older.events, ...newer.events]) {
    const k = eventKey(e);
    if (seenEvents.has(k)) continue;
    seenEvents.add(k);
    events.push(e);
  }
  const seenResumes = new Set<string>();
  const resumes: LineageResume[] = [];
  for (const r of [...older.resumes, ...newer.resumes]) {
    const k = `${r.side}|${r.spanId}`;
    if (seenResumes.has(k)) continue;
    seenResumes.add(k);
    resumes.push(r);
  }
  const requests = new Map<string, LineageRequest>();
  for (const r of older.requests) requests.set(r.requestId, r);
  for (const r of newer.requests) {
    const o = requests.get(r.requestId);
    requests.set(r.requestId, o === undefined ? r : { ...o, ...r });
  }
  const merged: SessionLineage = {
    sessionKey: newer.sessionKey,
    service: newer.service !== 'unknown_service' ? newer.service : older.service,
    incarnations: [...incs.values()],
    events,
    resumes,
    requests: [...requests.values()],
    findingIds: [...new Set([...older.findingIds, ...newer.findingIds])],
    lastActivityMs: Math.max(older.lastActivityMs, newer.lastActivityMs),
  };
  const clientService = newer.clientService ?? older.clientService;
  if (clientService !== undefined) merged.clientService = clientService;
  const omitted = (older.eventsOmitted ?? 0) + (newer.eventsOmitted ?? 0);
  if (omitted > 0) merged.eventsOmitted = omitted;
  return boundLineage(merged, bounds, cited);
}

/** A lineage as it is stored: without the answer-only fields (`source`, `missing`). */
export function storableLineage(l: SessionLineage): SessionLineage {
  const { source: _source, missing: _missing, ...rest } = l;
  return rest;
}
