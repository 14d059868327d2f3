import type { Finding, FindingKind } from '../model/finding.js';
import type { Side } from '../model/span-record.js';

/** Where a fact came from: enough to cite the span as evidence and to measure detection lag. */
export interface SpanFact {
  traceId: string;
  spanId: string;
  side: Side;
  name: string;
  /** Span start, epoch ms, emitter's clock: only comparable with facts of the same side. */
  timeMs: number;
  /** Detector clock when the span was ingested, epoch ms. */
  ingestMs: number;
}

export interface CreatedFact extends SpanFact {
  inc: string;
  source?: string;
  createdBy: string;
  clientSuppliedId?: boolean;
  lastEventId?: string;
}

export interface EndedFact extends SpanFact {
  inc: string;
  reason: string;
  eventsEvicted?: number;
}

export interface EventFact extends SpanFact {
  inc?: string;
  eventId: string;
  seq?: number;
  seqSource?: string;
  digest?: string;
  jsonrpcKind?: string;
  jsonrpcId?: string;
  method?: string;
  progressToken?: string;
  stream?: string;
  replayed?: boolean;
  delivery?: string;
  seenBefore?: boolean;
}

export interface ResumeFact extends SpanFact {
  lastEventId: string;
  status?: number;
  inc?: string;
  previousInc?: string;
  answeredKey?: string;
  found?: boolean;
  outcome?: string;
  /** `forkwatch.guarded` of the emitting side: a guarded client fails pending requests at once on 404/409/410. */
  guarded?: boolean;
  /** Already counted by onResume (alone or paired with the other side's span). */
  counted?: boolean;
}

export interface GuardForkFact extends SpanFact {
  forkKind: string;
  inc?: string;
}

export interface RequestFact {
  requestId: string;
  method?: string;
  tool?: string;
  progressToken?: string;
  /** Incarnation the client sent it on, or the server received it on. */
  inc?: string;
  /** Incarnation the client held when sending (client spans only: never an `observed` one). */
  sentInc?: string;
  sent?: SpanFact;
  /** The client that sent it was guarded (`forkwatch.guarded`): it fails pending requests at once on a 404 or fork. */
  sentGuarded?: boolean;
  received?: SpanFact & { inc?: string };
  /**
   * `streamClosed`: the request's response stream broke before its answer and no stream of the
   * session answered it before the client gave up (`forkwatch.request.stream_closed` on a
   * `request.settled` the sidecar proxy emits when it sees the client's `notifications/cancelled`).
   * Kept when the client's own settle replaces the proxy's. Present only when true.
   */
  settled?: SpanFact & { outcome?: string; streamClosed?: true };
}

/** Client facts that outlived their spans (dropped for space, or compacted away). */
export interface ClientBaseline {
  /** Highest seq (source server or counter) the client had received. */
  maxSeq?: number;
  /** Client-clock time of the newest forgotten event. */
  timeMs: number;
  /** The incarnation the client held. */
  inc?: string;
  lastEventId?: string;
}

/** What the engine already told its listeners about a finding. */
export interface EmittedFinding {
  kind: FindingKind;
  evidenceCount: number;
  detectedAtMs: number;
  /** Orphans only: kept so a late settle can resolve the finding without the spans. */
  finding?: Finding;
  requestId?: string;
  resolvedAtMs?: number;
  /** Orphans only: still counted in orphanedByService. */
  counting?: boolean;
}

/** Everything tracked for one session key. Plain data so that it serializes to JSON. */
export interface SessionState {
  key: string;
  /** Keyless spans (stateless server): never a fork. */
  stateless: boolean;
  serverService?: string;
  /** `forkwatch.observer` of every server span so far (a proxy), for the incident view's lane. */
  serverObserver?: string;
  clientService?: string;
  lastActivityMs: number;
  /** Detector clock of the first evidence not yet decided on. */
  pendingSinceMs?: number;
  created: CreatedFact[];
  ended: EndedFact[];
  events: EventFact[];
  resumes: ResumeFact[];
  guardForks: GuardForkFact[];
  requests: Map<string, RequestFact>;
  /** Events kept per `${side}:${incarnation}`. */
  eventCounts: Record<string, number>;
  /** Events dropped per `${side}:${incarnation}` for space. */
  droppedEvents: Record<string, number>;
  clientBaseline?: ClientBaseline;
  /** Server incarnations known from compacted history: incarnation -> created_by. */
  knownIncarnations: Record<string, string>;
  emitted: Record<string, EmittedFinding>;
}

/** A decided, idle session reduced to what later spans may still need (< 2 KiB). */
export interface CompactSession {
  key: string;
  compact: true;
  stateless: boolean;
  serverService?: string;
  clientService?: string;
  lastActivityMs: number;
  live: boolean;
  clientBaseline?: ClientBaseline;
  knownIncarnations: Record<string, string>;
  emitted: Record<string, EmittedFinding>;
  /** Requests with a progress token still waiting (no settle, no response seen): a later end or fork can orphan them. */
  requests?: RequestFact[];
}

export function newSessionState(key: string, stateless: boolean, nowMs: number): SessionState {
  return {
    key,
    stateless,
    lastActivityMs: nowMs,
    created: [],
    ended: [],
    events: [],
    resumes: [],
    guardForks: [],
    requests: new Map(),
    droppedEvents: NO_COUNTS,
    eventCounts: NO_COUNTS,
    knownIncarnations: {},
    emitted: {},
  };
}

/**
 * The `eventCounts` and `droppedEvents` of a session without events (most sessions: a healthy
 * session's spans are requests and its lifecycle), shared and frozen: the record a session
 * writes is made at its first count ({@link ownCounts}). A dictionary-mode record per session
 * was about 250 bytes of every healthy session's heap, and its making a percent of the CPU of
 * ingesting one. Frozen, so a write that skipped ownCounts throws (strict mode) instead of
 * counting for every session at once.
 */
export const NO_COUNTS: Record<string, number> = Object.freeze({}) as Record<string, number>;

/** `counts` when it is a session's own record, else a new one to write into (see {@link NO_COUNTS}). */
export function ownCounts(counts: Record<string, number>): Record<string, number> {
  return counts === NO_COUNTS ? keyedRecord() : counts;
}

/**
 * An empty plain object already in V8's dictionary mode, for a record written on the hot path
 * under keys unique to its session (`eventCounts`, keyed by incarnation). As an ordinary
 * fast-mode object every session's keys made hidden classes of their own and adding a key
 * walked an ever longer transition list: in the ingest bench that update was the costliest
 * line of recording a span. Deleting a property that is not the last one added switches an
 * object to dictionary mode; it stays a plain `{}` to everything else. Records written rarely
 * stay `{}`: an empty dictionary takes about 200 bytes more.
 */
export function keyedRecord<T>(): Record<string, T> {
  const o: Record<string, unknown> = {};
  o.a = 0;
  o.b = 0;
  delete o.a;
  delete o.b;
  return o as Record<string, T>;
}
