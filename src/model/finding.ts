import type { Side } from './span-record.js';

/** The fork kinds of `forkwatch_forks_total{kind}`. */
export const FORK_KINDS = [
  'minted_on_resume',
  'incarnation_changed',
  'sequence_regression',
  'replay_gap',
  'dedup_loss',
] as const;
export type ForkKind = (typeof FORK_KINDS)[number];

export const ORPHANED_PROGRESS_TOKEN = 'orphaned_progress_token' as const;

/** Stateless transport (2026-07-28) kinds of `forkwatch_request_anomalies_total{kind}`: never forks. */
export const REQUEST_ANOMALY_KINDS = ['orphaned_request', 'duplicate_execution', 'work_after_cancel'] as const;
export type RequestAnomalyKind = (typeof REQUEST_ANOMALY_KINDS)[number];

export type FindingKind = ForkKind | typeof ORPHANED_PROGRESS_TOKEN | RequestAnomalyKind;

/** The outcomes of `forkwatch_resumes_total{outcome}`. */
export const RESUME_OUTCOMES = ['resumed', 'rejected_404', 'rejected_gap', 'rejected_other', 'forked'] as const;
export type ResumeOutcome = (typeof RESUME_OUTCOMES)[number];

/** One span that supports a finding. */
export interface Evidence {
  traceId: string;
  spanId: string;
  side: Side;
  /** Span start, Unix epoch milliseconds, as the emitting host's clock had it. */
  timeMs: number;
  spanName: string;
  /** What this span shows, in a few words ("server created incarnation b1 on a GET resume"). */
  shows: string;
}

/**
 * A fork or an orphaned progress token. One fork is one finding however many spans show it: the
 * id is derived from what identifies the fork, so re-detection (after a restart, from the other
 * side's spans) updates rather than duplicates.
 */
export interface Finding {
  /** Stable id, 16 hex chars. */
  id: string;
  kind: FindingKind;
  /** `service.name` of the server side when known, else of the client. */
  service: string;
  sessionKey: string;
  /** The incarnation the client held (the one forked away from), when known. */
  incarnation?: string;
  /** The incarnation that replaced it, when known. */
  newIncarnation?: string;
  /** Progress token, for orphaned_progress_token findings. */
  progressToken?: string;
  /** JSON-RPC request id concerned, when one is. */
  requestId?: string;
  /** One line a paged engineer can act on. */
  summary: string;
  evidence: Evidence[];
  /** Earliest evidence time, epoch ms. */
  firstSeenMs: number;
  /** When the detector decided, epoch ms (detector clock). */
  detectedAtMs: number;
  /** Orphaned tokens: when the request finally settled, epoch ms; forks never resolve. */
  resolvedAtMs?: number;
}
