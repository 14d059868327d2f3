import type { Finding, ResumeOutcome } from '../model/finding.js';

/** Source of "now" for the engine, Unix epoch milliseconds. Injected so tests never sleep. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** Why the engine let go of data before it could decide on it; `forkwatch_correlation_dropped_total{reason}`. */
export type DropReason =
  | 'session_capacity' // a new session evicted the least recently updated one
  | 'event_capacity' // the engine held more events than maxTrackedEvents: the least recently updated sessions were evicted
  | 'events_per_session' // a session's oldest events were dropped to make room
  | 'requests_per_session' // a session's oldest pending requests were dropped
  | 'session_expired'; // a session idle past the TTL was expired (counted, and treated as a signal)

/**
 * What the engine tells the rest of the detector. Calls are synchronous and must not throw; the
 * storage and metrics steps subscribe here, the engine knows neither.
 */
export interface EngineListener {
  /**
   * A new finding, or new evidence on an existing one (same id). `info.lagMs`: detector-clock ms
   * from the ingestion of the finding's first evidence span to the decision
   * (`forkwatch_detection_lag_seconds` observes it when `isNew`).
   */
  onFinding?(finding: Finding, isNew: boolean, info?: FindingInfo): void;
  /** An orphaned progress token finally settled. */
  onFindingResolved?(finding: Finding): void;
  /** A resume was classified (once per resume, whichever side's spans showed it first). */
  onResume?(outcome: ResumeOutcome, service: string, traceId: string): void;
  onDrop?(reason: DropReason, count: number): void;
}

/** Extra facts about a reported finding that are not part of the finding itself. */
export interface FindingInfo {
  /** Detector-clock ms between ingesting the first evidence span and deciding. */
  lagMs: number;
}

/** Point-in-time sizes for gauges. */
export interface EngineStats {
  sessions: number;
  events: number;
  pendingRequests: number;
  /** Sessions with a live incarnation, by server service. */
  activeSessionsByService: Map<string, number>;
  /** Orphaned progress tokens not yet settled, by service. */
  orphanedByService: Map<string, number>;
}
