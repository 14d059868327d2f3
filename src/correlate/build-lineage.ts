import type { LineageEvent, LineageIncarnation, LineageRequest, LineageResume, SessionLineage, SpanRef } from '../model/lineage.js';
import type { ResumeOutcome } from '../model/finding.js';
import { outcomeOfStatus } from './analyze-session.js';
import { boundLineage, DEFAULT_KEPT_LINEAGE_BOUNDS } from './kept-lineage.js';
import type { CompactSession, SessionState, SpanFact } from './session-state.js';

const ref = (f: SpanFact, observer?: string): SpanRef =>
  f.side === 'server' && observer !== undefined
    ? { traceId: f.traceId, spanId: f.spanId, side: f.side, timeMs: f.timeMs, observer }
    : { traceId: f.traceId, spanId: f.spanId, side: f.side, timeMs: f.timeMs };

/**
 * The lineage view (GET /api/v1/sessions/:key) of a session's state or of its compacted summary,
 * events cut to `maxEvents` (default 200) as {@link boundLineage} cuts them: the API answer stays
 * small, and the picture is the one kept with the session's findings after compaction. A
 * summary's lineage names only its incarnations and says the rest is `missing`.
 */
export function buildLineage(s: SessionState | CompactSession, maxEvents = DEFAULT_KEPT_LINEAGE_BOUNDS.maxEvents): SessionLineage {
  // Server refs name the session's observer (a proxy): the incident view draws them in its lane.
  const obs = 'serverObserver' in s ? s.serverObserver : undefined;
  const service = s.serverService ?? s.clientService ?? 'unknown_service';
  const base: SessionLineage = {
    sessionKey: s.key,
    service,
    incarnations: [],
    events: [],
    resumes: [],
    requests: [],
    findingIds: Object.keys(s.emitted),
    lastActivityMs: s.lastActivityMs,
  };
  if (s.clientService !== undefined) base.clientService = s.clientService;
  if ('compact' in s) {
    base.incarnations = Object.entries(s.knownIncarnations).map(([incarnation, createdBy]) => ({
      incarnation,
      source: 'server',
      createdBy,
      eventCount: 0,
    }));
    base.missing = ['events', 'resumes', 'requests'];
    return base;
  }
  const incs = new Map<string, LineageIncarnation>();
  const incOf = (inc: string): LineageIncarnation => {
    let l = incs.get(inc);
    if (l === undefined) {
      l = { incarnation: inc, source: 'server', eventCount: 0 };
      if (s.knownIncarnations[inc] !== undefined) l.createdBy = s.knownIncarnations[inc];
      incs.set(inc, l);
    }
    return l;
  };
  for (const c of [...s.created].sort((a, b) => a.timeMs - b.timeMs)) {
    const l = incOf(c.inc);
    l.createdBy = c.createdBy;
    if (c.source !== undefined) l.source = c.source;
    if (c.clientSuppliedId !== undefined) l.clientSuppliedId = c.clientSuppliedId;
    l.created = ref(c, obs);
  }
  for (const e of s.ended) incOf(e.inc).ended = { ...ref(e, obs), reason: e.reason };
  const events: LineageEvent[] = [];
  for (const e of s.events) {
    if (e.inc !== undefined && e.side === 'server') {
      const l = incOf(e.inc);
      l.eventCount++;
      if (e.seq !== undefined) l.lastSeq = Math.max(l.lastSeq ?? e.seq, e.seq);
    }
    const le: LineageEvent = { ...ref(e, obs), eventId: e.eventId };
    if (e.inc !== undefined) le.incarnation = e.inc;
    if (e.seq !== undefined) le.seq = e.seq;
    if (e.digest !== undefined) le.digest = e.digest;
    if (e.jsonrpcKind !== undefined) le.jsonrpcKind = e.jsonrpcKind;
    if (e.jsonrpcId !== undefined) le.jsonrpcId = e.jsonrpcId;
    if (e.delivery !== undefined) le.delivery = e.delivery;
    if (e.replayed !== undefined) le.replayed = e.replayed;
    events.push(le);
  }
  base.events = events;
  base.resumes = s.resumes.map((r) => {
    const lr: LineageResume = { ...ref(r, obs), lastEventId: r.lastEventId };
    if (r.status !== undefined) lr.status = r.status;
    const o: ResumeOutcome = outcomeOfStatus(r.status, r.outcome);
    lr.outcome = r.outcome === 'forked' ? 'forked' : o;
    if (r.inc !== undefined) lr.incarnation = r.inc;
    if (r.previousInc !== undefined) lr.previousIncarnation = r.previousInc;
    return lr;
  });
  const orphanIds = new Set<string>();
  for (const e of Object.values(s.emitted)) if (e.requestId !== undefined && e.resolvedAtMs === undefined) orphanIds.add(e.requestId);
  base.requests = [...s.requests.values()].map((r) => {
    const lr: LineageRequest = {
      requestId: r.requestId,
      state: r.settled !== undefined ? 'settled' : orphanIds.has(r.requestId) ? 'orphaned' : 'pending',
    };
    if (r.method !== undefined) lr.method = r.method;
    if (r.tool !== undefined) lr.tool = r.tool;
    if (r.progressToken !== undefined) lr.progressToken = r.progressToken;
    if (r.inc !== undefined) lr.incarnation = r.inc;
    if (r.sent !== undefined) lr.sent = ref(r.sent, obs);
    if (r.settled !== undefined) lr.settled = ref(r.settled, obs);
    if (r.settled?.outcome !== undefined) lr.outcome = r.settled.outcome;
    return lr;
  });
  base.incarnations = [...incs.values()];
  return boundLineage(base, { ...DEFAULT_KEPT_LINEAGE_BOUNDS, maxEvents, maxIncarnations: Infinity, maxResumes: Infinity, maxRequests: Infinity });
}
