import type { Finding, FindingKind } from '../model/finding.js';
import type { Side } from '../model/span-record.js';
import { SPAN_SSE_EVENT } from '../semconv.js';

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
  received?: SpanFact & { inc?: string };
  settled?: SpanFact & { outcome?: string };
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
    droppedEvents: {},
    eventCounts: {},
    knownIncarnations: {},
    emitted: {},
  };
}

/**
 * Event fields in the order of their positional encoding (format 2). Events are the bulk of a
 * session's state (up to maxEventsPerIncarnation per side and incarnation): written as arrays they
 * take about half the bytes and serialize several times faster than as keyed objects.
 * Append only: stored states depend on these positions.
 */
const EVENT_FIELDS = [
  'traceId',
  'spanId',
  'side',
  'timeMs',
  'ingestMs',
  'inc',
  'eventId',
  'seq',
  'seqSource',
  'digest',
  'jsonrpcKind',
  'jsonrpcId',
  'method',
  'progressToken',
  'stream',
  'replayed',
  'delivery',
  'seenBefore',
] as const satisfies ReadonlyArray<keyof EventFact>;

/** Value of `v` in a format-2 state; format 1 (keyed events, no `v`) is still read. */
const FORMAT_POSITIONAL_EVENTS = 2;

type EncodedEvent = Array<string | number | boolean | null>;

function encodeEvent(e: EventFact): EncodedEvent {
  // Undefined becomes null in a JSON array; trailing ones are cut to save bytes.
  const out: EncodedEvent = [
    e.traceId,
    e.spanId,
    e.side,
    e.timeMs,
    e.ingestMs,
    e.inc ?? null,
    e.eventId,
    e.seq ?? null,
    e.seqSource ?? null,
    e.digest ?? null,
    e.jsonrpcKind ?? null,
    e.jsonrpcId ?? null,
    e.method ?? null,
    e.progressToken ?? null,
    e.stream ?? null,
    e.replayed ?? null,
    e.delivery ?? null,
    e.seenBefore ?? null,
  ];
  let n = out.length;
  while (n > 0 && out[n - 1] === null) n--;
  out.length = n;
  return out;
}

function decodeEvent(a: unknown): EventFact {
  if (!Array.isArray(a)) throw new TypeError('malformed event');
  const e: Record<string, unknown> = { name: SPAN_SSE_EVENT };
  for (let i = 0; i < EVENT_FIELDS.length && i < a.length; i++) {
    const v: unknown = a[i];
    if (v !== null && v !== undefined) e[EVENT_FIELDS[i]!] = v;
  }
  if (typeof e['eventId'] !== 'string' || (e['side'] !== 'client' && e['side'] !== 'server')) throw new TypeError('malformed event');
  return e as unknown as EventFact;
}

/** JSON of a session for persistence (takeDirty). */
export function serializeSession(s: SessionState | CompactSession): string {
  if ('compact' in s) return JSON.stringify(s);
  const ev = new Array<EncodedEvent>(s.events.length);
  for (let i = 0; i < s.events.length; i++) ev[i] = encodeEvent(s.events[i]!);
  return JSON.stringify({ ...s, v: FORMAT_POSITIONAL_EVENTS, events: ev, requests: [...s.requests.values()] });
}

/** Inverse of {@link serializeSession} (either format); throws on malformed JSON (the caller counts it). */
export function deserializeSession(json: string): SessionState | CompactSession {
  const raw = JSON.parse(json) as Record<string, unknown>;
  if (typeof raw['key'] !== 'string') throw new TypeError('session state without key');
  if (raw['compact'] === true) return raw as unknown as CompactSession;
  const reqs = Array.isArray(raw['requests']) ? (raw['requests'] as RequestFact[]) : [];
  if (raw['v'] === FORMAT_POSITIONAL_EVENTS) {
    raw['events'] = Array.isArray(raw['events']) ? raw['events'].map(decodeEvent) : [];
  }
  delete raw['v'];
  const s = raw as unknown as SessionState;
  s.requests = new Map(reqs.map((r) => [r.requestId, r]));
  s.created ??= [];
  s.ended ??= [];
  s.events ??= [];
  s.resumes ??= [];
  s.guardForks ??= [];
  s.droppedEvents ??= {};
  s.eventCounts ??= {};
  s.knownIncarnations ??= {};
  s.emitted ??= {};
  return s;
}
