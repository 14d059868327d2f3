import type { FindingKind, ResumeOutcome } from '../../model/finding.js';
import type { ResumeFact, SpanFact } from '../session-state.js';

/** A finding as analysis sees it, before the engine gives it an id, service and times. */
export interface FindingDraft {
  kind: FindingKind;
  /** What identifies the fork (or request) within the session: part of the finding id. */
  identity: string;
  incarnation?: string;
  newIncarnation?: string;
  requestId?: string;
  progressToken?: string;
  summary: string;
  evidence: Array<{ fact: SpanFact; shows: string }>;
  /** Last-Event-ID of the resume the fork is attributed to, when known. */
  resumeCursor?: string;
  /** Client-clock time at which the client met the fork, when client spans show it. */
  clientAnchorMs?: number;
  /**
   * Orphans whose request had already settled without an answer when decided: detector-clock ms
   * at which the settle was ingested (what the engine would have set had it reported the orphan
   * before the settle arrived).
   */
  resolvedAtMs?: number;
}

/** One resume (one or two spans: client and server) to count once. */
export interface ResumeDecision {
  outcome: ResumeOutcome;
  traceId: string;
  facts: ResumeFact[];
}

export interface SessionAnalysis {
  findings: FindingDraft[];
  resumes: ResumeDecision[];
  /** The analysis marked a resume fact counted (its pair's other half was): the state changed though nothing is reported. */
  marked: boolean;
}
