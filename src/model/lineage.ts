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
}
