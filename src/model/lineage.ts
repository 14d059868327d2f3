import type { ResumeOutcome } from './finding.js';
import type { Side } from './span-record.js';

/** A span reference inside a lineage entry. */
export interface SpanRef {
  traceId: string;
  spanId: string;
  side: Side;
  /** Span start, epoch ms, emitter's clock. */
  timeMs: number;
  /** `forkwatch.observer` of the session's server spans (`proxy`: seen on the wire), when one. */
  observer?: string;
}

export interface LineageIncarnation {
  incarnation: string;
  /** `server` (sent on the wire by a guard), `observed` (server instrumentation only). */
  source: string;
  /** JSON-RPC method that created it; anything but `initialize` is a fork. */
  createdBy?: string;
  clientSuppliedId?: boolean;
  created?: SpanRef;
  ended?: SpanRef & { reason: string };
  /** Highest event sequence seen in this incarnation. */
  lastSeq?: number;
  eventCount: number;
}

export interface LineageEvent extends SpanRef {
  incarnation?: string;
  eventId: string;
  seq?: number;
  digest?: string;
  jsonrpcKind?: string;
  jsonrpcId?: string;
  /** Client side: delivered | dropped | no_payload. */
  delivery?: string;
  replayed?: boolean;
}

export interface LineageResume extends SpanRef {
  lastEventId: string;
  status?: number;
  outcome?: ResumeOutcome;
  incarnation?: string;
  previousIncarnation?: string;
}

export interface LineageRequest {
  requestId: string;
  method?: string;
  /** `gen_ai.tool.name` of a tools/call. */
  tool?: string;
  progressToken?: string;
  incarnation?: string;
  sent?: SpanRef;
  /** When it settled (answered, failed, timed out), on the side that saw it. */
  settled?: SpanRef;
  /** pending | orphaned | settled | expired */
  state: string;
  outcome?: string;
}

/**
 * Where a lineage answer came from: `live` the correlator's full state of the session; `compacted`
 * the correlator holds only its summary (the picture is the lineage kept with its findings, or
 * the summary's incarnations alone for a clean session); `stored` the correlator holds nothing
 * (expired, evicted, or not yet seen since a restart) and the answer is read from SQLite.
 */
export type LineageSource = 'live' | 'compacted' | 'stored';

/** Lists of a lineage that can be gone while the session is still known. */
export type LineagePart = 'events' | 'resumes' | 'requests';

/** Everything the detector knows of one session key: GET /api/v1/sessions/:key. */
export interface SessionLineage {
  sessionKey: string;
  service: string;
  clientService?: string;
  /** In order of creation as far as causality tells. */
  incarnations: LineageIncarnation[];
  /** Most recent events, bounded (oldest dropped first). */
  events: LineageEvent[];
  resumes: LineageResume[];
  requests: LineageRequest[];
  findingIds: string[];
  /** Detector clock, epoch ms, of the last span ingested for this key. */
  lastActivityMs: number;
  /** Set by the engine and the API; absent on a lineage kept in storage. */
  source?: LineageSource;
  /**
   * Parts no longer held (their list is empty or partial because the data is gone, not because
   * the session had none): a clean session after compaction, or findings stored before lineages
   * were kept. Empty when the answer is the whole picture, bounds aside.
   */
  missing?: LineagePart[];
  /** Events left out by the per-session bound (the oldest ordinary ones first). */
  eventsOmitted?: number;
}
