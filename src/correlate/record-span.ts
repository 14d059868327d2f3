import type { AttrValue, Side, SpanRecord } from '../model/span-record.js';
import {
  ATTR_OBSERVER,
  ATTR_CLIENT_DELIVERY,
  ATTR_CLIENT_SEEN_BEFORE,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GUARDED,
  ATTR_GUARD_FORK_KIND,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_JSONRPC_KIND,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_METHOD_NAME,
  ATTR_PROGRESS_TOKEN,
  ATTR_REQUEST_OUTCOME,
  ATTR_REQUEST_STREAM_CLOSED,
  ATTR_RESUME_ANSWERED_SESSION_KEY,
  ATTR_RESUME_LAST_EVENT_FOUND,
  ATTR_RESUME_LAST_EVENT_ID,
  ATTR_RESUME_OUTCOME,
  ATTR_RESUME_PREVIOUS_INCARNATION,
  ATTR_SESSION_CLIENT_SUPPLIED_ID,
  ATTR_SESSION_CREATED_BY,
  ATTR_SESSION_END_REASON,
  ATTR_SESSION_EVENTS_EVICTED,
  ATTR_SESSION_INCARNATION,
  ATTR_SESSION_INCARNATION_SOURCE,
  ATTR_SSE_EVENT_ID,
  ATTR_SSE_EVENT_SEQ,
  ATTR_SSE_EVENT_SEQ_SOURCE,
  ATTR_SSE_PAYLOAD_DIGEST,
  ATTR_SSE_REPLAYED,
  ATTR_SSE_STREAM_ID,
  SPAN_GUARD_FORK,
  SPAN_REQUEST_RECEIVED,
  SPAN_REQUEST_SENT,
  SPAN_REQUEST_SETTLED,
  SPAN_RESUME,
  SPAN_SESSION_CREATED,
  SPAN_SESSION_ENDED,
  SPAN_SSE_EVENT,
} from '@forkwatch/instrumentation/semconv';
import type { EngineOptions } from './engine-options.js';
import type { CreatedFact, EndedFact, EventFact, RequestFact, SessionState, SpanFact } from './session-state.js';
import { ownCounts } from './session-state.js';

function str(a: Record<string, AttrValue>, k: string): string | undefined {
  const v = a[k];
  if (v === undefined || v === '') return undefined;
  return typeof v === 'string' ? v : String(v);
}
function num(a: Record<string, AttrValue>, k: string): number | undefined {
  const v = a[k];
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v === 'string' && v !== '') {
    const n = Number(v);
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}
function bool(a: Record<string, AttrValue>, k: string): boolean | undefined {
  const v = a[k];
  if (typeof v === 'boolean') return v;
  if (v === 'true') return true;
  if (v === 'false') return false;
  return undefined;
}

/** What recording one span changed, for the engine's counters. Reused between calls: read it at once. */
export interface RecordResult {
  /** The span was a forkwatch span the engine keeps. */
  kept: boolean;
  eventsAdded: number;
  /** Oldest requests dropped for space. */
  requestsDropped: number;
  /** Oldest events dropped for space. */
  eventsDropped: number;
  /** Change in the number of unsettled requests. */
  pendingRequestsDelta: number;
  /** A request settled: its id, so that an emitted orphan can be resolved at once. */
  settledRequestId: string | undefined;
  /** The request the span added or completed (what a saved delta must carry), and whether it added it. */
  request: RequestFact | undefined;
  requestAdded: boolean;
}

/** A fresh result holder for {@link recordSpan}. */
export function newRecordResult(): RecordResult {
  return { kept: false, eventsAdded: 0, requestsDropped: 0, eventsDropped: 0, pendingRequestsDelta: 0, settledRequestId: undefined, request: undefined, requestAdded: false };
}

/**
 * Records one span into its session's state, bounding every list. Unknown span names and spans
 * lacking the attributes that make them useful are ignored (kept=false), never thrown on. Hot
 * path: objects are built with one fixed shape each, without spreads (a spread of a fresh object
 * gave every fact its own hidden class: thousands of them, and kilobytes per session).
 */
export function recordSpan(
  s: SessionState,
  span: SpanRecord,
  side: Side,
  nowMs: number,
  opts: EngineOptions,
  res: RecordResult,
): RecordResult {
  const a = span.attributes;
  res.kept = true;
  res.eventsAdded = 0;
  res.requestsDropped = 0;
  res.pendingRequestsDelta = 0;
  res.eventsDropped = 0;
  res.settledRequestId = undefined;
  res.request = undefined;
  const inc = str(a, ATTR_SESSION_INCARNATION);
  if (side === 'server') {
    // The proxy's lane: while every server span of the session names the same observer.
    const raw = a[ATTR_OBSERVER];
    const obs = typeof raw === 'string' && raw !== '' ? raw.slice(0, 64) : undefined;
    if (s.serverService === undefined) s.serverObserver = obs;
    else if (s.serverObserver !== undefined && s.serverObserver !== obs) s.serverObserver = undefined;
    s.serverService ??= span.service;
  } else s.clientService ??= span.service;
  const name = span.name;

  if (name === SPAN_SSE_EVENT) {
    const eventId = str(a, ATTR_SSE_EVENT_ID);
    if (eventId === undefined) return notKept(res);
    const ev: EventFact = {
      traceId: span.traceId,
      spanId: span.spanId,
      side,
      name,
      timeMs: span.startMs,
      ingestMs: nowMs,
      inc,
      eventId,
      seq: num(a, ATTR_SSE_EVENT_SEQ),
      seqSource: str(a, ATTR_SSE_EVENT_SEQ_SOURCE),
      digest: str(a, ATTR_SSE_PAYLOAD_DIGEST),
      jsonrpcKind: str(a, ATTR_JSONRPC_KIND),
      jsonrpcId: str(a, ATTR_JSONRPC_REQUEST_ID),
      method: str(a, ATTR_MCP_METHOD_NAME),
      progressToken: str(a, ATTR_PROGRESS_TOKEN),
      stream: str(a, ATTR_SSE_STREAM_ID),
      replayed: bool(a, ATTR_SSE_REPLAYED),
      delivery: str(a, ATTR_CLIENT_DELIVERY),
      seenBefore: bool(a, ATTR_CLIENT_SEEN_BEFORE),
    };
    addEvent(s, ev, opts, res);
    return res;
  }
  // The span's own fields, not a SpanFact made for every span: only a request's send keeps one
  // as it is, the other facts are literals of their own shape.
  const traceId = span.traceId;
  const spanId = span.spanId;
  const timeMs = span.startMs;
  switch (name) {
    case SPAN_SESSION_CREATED: {
      if (inc === undefined) return notKept(res);
      if (hasSpan(s.created, spanId)) return res;
      // A session's first created (and ended) fact goes into a one-element list of its own: a
      // push onto an empty `[]` gives it room for 16, ~130 bytes that a healthy session (one of
      // each in its whole life) never uses and holds until it is compacted.
      const c: CreatedFact = {
        traceId,
        spanId,
        side,
        name,
        timeMs,
        ingestMs: nowMs,
        inc,
        source: str(a, ATTR_SESSION_INCARNATION_SOURCE),
        createdBy: str(a, ATTR_SESSION_CREATED_BY) ?? 'unknown',
        clientSuppliedId: bool(a, ATTR_SESSION_CLIENT_SUPPLIED_ID),
        lastEventId: str(a, ATTR_RESUME_LAST_EVENT_ID),
      };
      if (s.created.length === 0) s.created = [c];
      else s.created.push(c);
      trimIncarnations(s, opts);
      return res;
    }
    case SPAN_SESSION_ENDED: {
      if (inc === undefined) return notKept(res);
      if (hasSpan(s.ended, spanId)) return res;
      const e: EndedFact = {
        traceId,
        spanId,
        side,
        name,
        timeMs,
        ingestMs: nowMs,
        inc,
        reason: str(a, ATTR_SESSION_END_REASON) ?? 'unknown',
        eventsEvicted: num(a, ATTR_SESSION_EVENTS_EVICTED),
      };
      if (s.ended.length === 0) s.ended = [e];
      else s.ended.push(e);
      if (s.ended.length > opts.maxIncarnationsPerSession) s.ended.shift();
      return res;
    }
    case SPAN_RESUME: {
      const lastEventId = str(a, ATTR_RESUME_LAST_EVENT_ID);
      if (lastEventId === undefined) return notKept(res);
      if (hasSpan(s.resumes, spanId, traceId)) return res;
      const ak = str(a, ATTR_RESUME_ANSWERED_SESSION_KEY);
      s.resumes.push({
        traceId,
        spanId,
        side,
        name,
        timeMs,
        ingestMs: nowMs,
        lastEventId,
        status: num(a, ATTR_HTTP_RESPONSE_STATUS_CODE),
        inc,
        previousInc: str(a, ATTR_RESUME_PREVIOUS_INCARNATION),
        answeredKey: ak !== undefined && ak !== s.key ? ak : undefined,
        found: bool(a, ATTR_RESUME_LAST_EVENT_FOUND),
        outcome: str(a, ATTR_RESUME_OUTCOME),
        guarded: bool(a, ATTR_GUARDED),
        counted: undefined,
      });
      if (s.resumes.length > opts.maxResumesPerSession) s.resumes.shift();
      return res;
    }
    case SPAN_REQUEST_SENT:
    case SPAN_REQUEST_RECEIVED:
    case SPAN_REQUEST_SETTLED: {
      const requestId = str(a, ATTR_JSONRPC_REQUEST_ID);
      if (requestId === undefined) return notKept(res);
      let r = s.requests.get(requestId);
      res.requestAdded = r === undefined;
      if (r === undefined) {
        r = newRequestFact(requestId);
        s.requests.set(requestId, r);
        res.pendingRequestsDelta++;
        if (s.requests.size > opts.maxRequestsPerSession) {
          const [oldestId, oldest] = s.requests.entries().next().value as [string, RequestFact];
          s.requests.delete(oldestId);
          if (oldest.settled === undefined) res.pendingRequestsDelta--;
          res.requestsDropped++;
        }
      }
      res.request = r;
      r.method ??= str(a, ATTR_MCP_METHOD_NAME);
      r.tool ??= str(a, ATTR_GEN_AI_TOOL_NAME);
      r.progressToken ??= str(a, ATTR_PROGRESS_TOKEN);
      if (name === SPAN_REQUEST_SENT) {
        r.sent = { traceId, spanId, side, name, timeMs, ingestMs: nowMs };
        r.sentInc = inc;
        r.sentGuarded = bool(a, ATTR_GUARDED) === true ? true : undefined;
        r.inc ??= inc;
      } else if (name === SPAN_REQUEST_RECEIVED) {
        r.received = { traceId, spanId, side, name, timeMs, ingestMs: nowMs, inc };
        r.inc ??= inc;
      } else {
        // A proxy's settle (server side: what it saw of the client's cancel) never displaces the
        // client's own, which says how the app stopped waiting; its broken-stream evidence stays.
        const streamClosed = bool(a, ATTR_REQUEST_STREAM_CLOSED) === true || r.settled?.streamClosed === true;
        if (side === 'server' && r.settled?.side === 'client') {
          if (streamClosed) r.settled.streamClosed = true;
          return res;
        }
        if (r.settled === undefined) res.pendingRequestsDelta--;
        r.settled = { traceId, spanId, side, name, timeMs, ingestMs: nowMs, outcome: str(a, ATTR_REQUEST_OUTCOME) };
        if (streamClosed) r.settled.streamClosed = true;
        res.settledRequestId = requestId;
      }
      return res;
    }
    case SPAN_GUARD_FORK: {
      s.guardForks.push({
        traceId,
        spanId,
        side,
        name,
        timeMs,
        ingestMs: nowMs,
        forkKind: str(a, ATTR_GUARD_FORK_KIND) ?? 'unknown',
        inc,
      });
      if (s.guardForks.length > opts.maxResumesPerSession) s.guardForks.shift();
      return res;
    }
    default:
      return notKept(res);
  }
}

/** A request with every field present (undefined until known): one object shape for all requests. */
function newRequestFact(requestId: string): RequestFact {
  return {
    requestId,
    method: undefined,
    tool: undefined,
    progressToken: undefined,
    inc: undefined,
    sentInc: undefined,
    sent: undefined,
    sentGuarded: undefined,
    received: undefined,
    settled: undefined,
  };
}

/**
 * Whether `facts` already holds the span `spanId` (of trace `traceId` when given): a retried
 * export delivers a span again. A loop rather than `some` with a closure over the ids, which
 * allocated a context and a function per span.
 */
function hasSpan(facts: readonly SpanFact[], spanId: string, traceId?: string): boolean {
  for (let i = 0; i < facts.length; i++) {
    const x = facts[i]!;
    if (x.spanId === spanId && (traceId === undefined || x.traceId === traceId)) return true;
  }
  return false;
}

function notKept(res: RecordResult): RecordResult {
  res.kept = false;
  return res;
}

function addEvent(s: SessionState, ev: EventFact, opts: EngineOptions, res: RecordResult): void {
  // A retried export can deliver the same span twice.
  for (let i = s.events.length - 1; i >= 0 && i >= s.events.length - 8; i--) {
    const o = s.events[i]!;
    if (o.spanId === ev.spanId && o.traceId === ev.traceId) return;
  }
  s.events.push(ev);
  res.eventsAdded++;
  const bucket = bucketOf(ev.side, ev.inc);
  const counts = (s.eventCounts = ownCounts(s.eventCounts));
  const n = (counts[bucket] ?? 0) + 1;
  counts[bucket] = n;
  if (n <= opts.maxEventsPerIncarnation) return;
  counts[bucket] = n - 1;
  const idx = s.events.findIndex((o) => o.side === ev.side && (o.inc ?? '') === (ev.inc ?? ''));
  const [gone] = s.events.splice(idx, 1);
  res.eventsAdded--;
  const dropped = (s.droppedEvents = ownCounts(s.droppedEvents));
  dropped[bucket] = (dropped[bucket] ?? 0) + 1;
  res.eventsDropped++;
  if (gone !== undefined && gone.side === 'client') rememberClientEvent(s, gone);
}

// The last bucket key built per side: runs of events of one incarnation reuse one string, so the
// eventCounts lookups neither concatenate nor re-hash a fresh key for every event.
let serverBucketInc: string | undefined;
let serverBucket = 'server:';
let clientBucketInc: string | undefined;
let clientBucket = 'client:';

/** `${side}:${inc ?? ''}`, the key of eventCounts and droppedEvents. */
function bucketOf(side: Side, inc: string | undefined): string {
  if (side === 'server') {
    if (inc !== serverBucketInc) {
      serverBucketInc = inc;
      serverBucket = `server:${inc ?? ''}`;
    }
    return serverBucket;
  }
  if (inc !== clientBucketInc) {
    clientBucketInc = inc;
    clientBucket = `client:${inc ?? ''}`;
  }
  return clientBucket;
}

/** Folds a forgotten client event into the baseline the regression checks compare against. */
export function rememberClientEvent(s: SessionState, ev: EventFact): void {
  const b = (s.clientBaseline ??= { timeMs: ev.timeMs });
  if (ev.timeMs >= b.timeMs) {
    b.timeMs = ev.timeMs;
    b.lastEventId = ev.eventId;
    if (ev.inc !== undefined) b.inc = ev.inc;
  }
  if (ev.seq !== undefined && (ev.seqSource === 'server' || ev.seqSource === 'counter')) {
    b.maxSeq = Math.max(b.maxSeq ?? ev.seq, ev.seq);
  }
}

function trimIncarnations(s: SessionState, opts: EngineOptions): void {
  if (s.created.length <= opts.maxIncarnationsPerSession) return;
  const gone = s.created.shift()!;
  s.knownIncarnations[gone.inc] = gone.createdBy;
}
