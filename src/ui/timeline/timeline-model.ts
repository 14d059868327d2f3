import type { Finding } from '../../model/finding.js';
import type { LineageEvent, LineageRequest, LineageResume, SessionLineage, SpanRef } from '../../model/lineage.js';
import { laneKeyOf, orderLanes, type Lane } from './lanes.js';
import { partitionGaps, type Gap } from './partition-gaps.js';

/** An incarnation's life as seen in one lane. */
export interface Band {
  lane: string;
  incarnation: string;
  /** Position of the incarnation in the lineage: colours are picked by it. */
  index: number;
  fromMs: number;
  toMs: number;
  /** No creation span seen: the band starts at the first thing seen of it. */
  openStart: boolean;
  createdBy?: string;
  /** Created by something other than `initialize`: the fork. */
  minted: boolean;
  endedReason?: string;
}

/** One SSE event on a lane, with what makes it worth drawing on its own. */
export interface TimelineEvent {
  lane: string;
  event: LineageEvent;
  incIndex?: number;
  dropped: boolean;
  /** Its seq is below one the same lane had already seen (the first of each regression). */
  regressed: boolean;
  /** A finding cites its span. */
  cited: boolean;
}

/** A finding drawn as a flag where its evidence is. */
export interface FindingMark {
  lane: string;
  timeMs: number;
  finding: Finding;
}

/** A request on its lane, from sent to settled (or to the view's end when it never settled). */
export interface RequestBar {
  lane: string;
  fromMs: number;
  toMs?: number;
  request: LineageRequest;
  /** Orphaned now, or named by an orphaned_progress_token finding (even if a timeout settled it since). */
  orphaned: boolean;
}

/** Everything the renderer draws, with the lineage's times (epoch ms, each emitter's clock). */
export interface TimelineModel {
  sessionKey: string;
  lanes: Lane[];
  t0: number;
  t1: number;
  bands: Band[];
  events: TimelineEvent[];
  resumes: Array<{ lane: string; resume: LineageResume }>;
  requests: RequestBar[];
  gaps: Gap[];
  marks: FindingMark[];
  /** Lineage entries without a time (stored lineages): listed, not drawn. */
  undrawn: number;
}

const FINITE = (n: number | undefined): n is number => typeof n === 'number' && Number.isFinite(n);

/**
 * Lays out a session's lineage and its findings on lanes and a time range. Pure: the same input
 * gives the same model, whatever the size (the renderer decides what to aggregate).
 */
export function buildTimelineModel(lineage: SessionLineage, findings: readonly Finding[]): TimelineModel {
  const laneKeys: string[] = [];
  const times: number[] = [];
  const seen = (ref: SpanRef | undefined): string | undefined => {
    if (ref === undefined || !FINITE(ref.timeMs)) return undefined;
    times.push(ref.timeMs);
    const k = laneKeyOf(ref);
    laneKeys.push(k);
    return k;
  };

  const incIndex = new Map<string, number>();
  lineage.incarnations.forEach((inc, i) => incIndex.set(inc.incarnation, i));
  const indexOf = (inc: string | undefined): number | undefined => {
    if (inc === undefined) return undefined;
    if (!incIndex.has(inc)) incIndex.set(inc, incIndex.size);
    return incIndex.get(inc);
  };

  const cited = new Set<string>();
  for (const f of findings) for (const e of f.evidence) cited.add(e.spanId);

  let undrawn = 0;
  const events: TimelineEvent[] = [];
  const maxSeq = new Map<string, number>();
  const inRegression = new Set<string>();
  for (const e of [...lineage.events].sort((a, b) => a.timeMs - b.timeMs)) {
    const lane = seen(e);
    if (lane === undefined) {
      undrawn++;
      continue;
    }
    let regressed = false;
    if (FINITE(e.seq)) {
      const max = maxSeq.get(lane);
      if (max !== undefined && e.seq < max) {
        regressed = !inRegression.has(lane);
        inRegression.add(lane);
      } else {
        inRegression.delete(lane);
      }
      maxSeq.set(lane, Math.max(max ?? e.seq, e.seq));
    }
    const te: TimelineEvent = { lane, event: e, dropped: e.delivery === 'dropped', regressed, cited: cited.has(e.spanId) };
    const idx = indexOf(e.incarnation);
    if (idx !== undefined) te.incIndex = idx;
    events.push(te);
  }

  const resumes: TimelineModel['resumes'] = [];
  for (const r of lineage.resumes) {
    const lane = seen(r);
    if (lane === undefined) undrawn++;
    else resumes.push({ lane, resume: r });
  }

  // Request ids restart per protocol instance: match the incarnation too when both sides name one.
  const orphanIncs = new Map<string, Set<string | undefined>>();
  for (const f of findings) {
    if (f.kind !== 'orphaned_progress_token' || f.requestId === undefined) continue;
    orphanIncs.set(f.requestId, (orphanIncs.get(f.requestId) ?? new Set()).add(f.incarnation));
  }
  const orphanedByFinding = (r: LineageRequest): boolean => {
    const incs = orphanIncs.get(r.requestId);
    return incs !== undefined && (r.incarnation === undefined || incs.has(undefined) || incs.has(r.incarnation));
  };

  const requests: RequestBar[] = [];
  for (const r of lineage.requests) {
    const lane = seen(r.sent);
    if (lane === undefined) {
      undrawn++;
      continue;
    }
    const bar: RequestBar = { lane, fromMs: r.sent!.timeMs, request: r, orphaned: r.state === 'orphaned' || orphanedByFinding(r) };
    const settled = r.settled;
    // Another side's clock may be skewed: only a settle seen on the same lane bounds the bar.
    if (settled !== undefined && FINITE(settled.timeMs) && laneKeyOf(settled) === lane) {
      times.push(settled.timeMs);
      bar.toMs = settled.timeMs;
    }
    requests.push(bar);
  }

  const marks: FindingMark[] = [];
  // Evidence names a side only: where the lineage's server side was seen by an observer (a
  // proxy), its server evidence goes in that observer's lane too.
  const observer = serverObserverOf(lineage);
  for (const f of findings) {
    const ev = [...f.evidence].filter((e) => FINITE(e.timeMs)).sort((a, b) => a.timeMs - b.timeMs);
    // The last evidence is where the fork became visible (the mint, the regressed event, the drop).
    const at = ev[ev.length - 1];
    if (at === undefined) continue;
    marks.push({ lane: seen(observer !== undefined && at.side === 'server' ? { ...at, observer } : at)!, timeMs: at.timeMs, finding: f });
  }

  const bands = buildBands(lineage, events, incIndex, seen);
  if (times.length === 0) times.push(lineage.lastActivityMs);
  const t0 = Math.min(...times);
  const t1 = Math.max(...times);
  for (const b of bands) if (!FINITE(b.toMs)) b.toMs = t1;

  return {
    sessionKey: lineage.sessionKey,
    lanes: orderLanes(laneKeys.length > 0 ? laneKeys : ['client', 'server']),
    t0,
    t1,
    bands,
    events,
    resumes,
    requests,
    gaps: partitionGaps(events, resumes, requests),
    marks,
    undrawn,
  };
}

function buildBands(
  lineage: SessionLineage,
  events: readonly TimelineEvent[],
  incIndex: Map<string, number>,
  seen: (ref: SpanRef | undefined) => string | undefined,
): Band[] {
  const bands = new Map<string, Band>();
  const extend = (lane: string, inc: string, ms: number, created: boolean): Band => {
    const id = `${lane}\u0000${inc}`;
    let b = bands.get(id);
    if (b === undefined) {
      b = { lane, incarnation: inc, index: incIndex.get(inc) ?? 0, fromMs: ms, toMs: ms, openStart: !created, minted: false };
      bands.set(id, b);
    }
    b.fromMs = Math.min(b.fromMs, ms);
    b.toMs = Math.max(b.toMs, ms);
    if (created) b.openStart = false;
    return b;
  };
  for (const inc of lineage.incarnations) {
    const lane = seen(inc.created);
    if (lane !== undefined) {
      const b = extend(lane, inc.incarnation, inc.created!.timeMs, true);
      if (inc.createdBy !== undefined) b.createdBy = inc.createdBy;
      b.minted = inc.createdBy !== undefined && inc.createdBy !== 'initialize';
    }
    const endLane = seen(inc.ended);
    if (endLane !== undefined) extend(endLane, inc.incarnation, inc.ended!.timeMs, false).endedReason = inc.ended!.reason;
  }
  for (const e of events) if (e.event.incarnation !== undefined) extend(e.lane, e.event.incarnation, e.event.timeMs, false);
  return [...bands.values()].sort((a, b) => a.fromMs - b.fromMs);
}

/** The observer the lineage's server refs name (a proxy), when they name one. */
function serverObserverOf(l: SessionLineage): string | undefined {
  const refs: Array<SpanRef | undefined> = [...l.events, ...l.resumes, ...l.incarnations.map((i) => i.created)];
  for (const r of refs) if (r?.side === 'server' && typeof r.observer === 'string' && r.observer !== '') return r.observer;
  return undefined;
}
