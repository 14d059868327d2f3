import type { Finding, ResumeOutcome } from '../model/finding.js';
import { ORPHANED_PROGRESS_TOKEN } from '../model/finding.js';
import { MAX_EVIDENCE, analyzeSession, settledShows } from './analyze-session.js';
import { findingFromDraft } from './finding-from-draft.js';
import { findingId } from './finding-id.js';
import type { EmittedFinding, SessionState } from './session-state.js';

/** What reporting a decision needs of the engine: its orphan counts and its (guarded) listener. */
export interface DecisionSink {
  countOrphan(service: string, delta: number): void;
  onFinding(f: Finding, isNew: boolean, lagMs: number): void;
  onFindingResolved(f: Finding): void;
  onResume(outcome: ResumeOutcome, service: string, traceId: string): void;
}

/**
 * Analyzes `s` and reports what is new since its last decision: new findings, new evidence on
 * reported ones, orphans settled before this decision, and resume outcomes not counted yet.
 * Records what it reported in `s.emitted`, so a re-decision (or a restored state) repeats nothing.
 * Returns whether it reported (and so changed `s`) anything: when not, deciding again yields the
 * same nothing (the analysis is a pure function of the state), which lets the engine skip saving
 * a decision that only cleared the session's pending flag.
 */
export function reportDecision(s: SessionState, now: number, sink: DecisionSink): boolean {
  const analysis = analyzeSession(s);
  let changed = analysis.marked;
  const service = s.serverService ?? s.clientService ?? 'unknown_service';
  for (const d of analysis.findings) {
    const id = findingId(d.kind, s.key, d.identity);
    const prev = s.emitted[id];
    if (prev?.resolvedAtMs !== undefined) continue;
    const orphan = d.kind === ORPHANED_PROGRESS_TOKEN;
    // An orphan whose request settled (unanswered) before this decision: reported already
    // resolved, with the same id and resolution time a report before the settle would have had.
    const settledMs = orphan ? d.resolvedAtMs : undefined;
    // Already reported and nothing new: most re-decisions end here, before building anything.
    if (prev !== undefined && settledMs === undefined && d.evidence.length <= prev.evidenceCount) continue;
    const { finding: f, lagMs } = findingFromDraft(d, id, s, service, prev?.detectedAtMs ?? now, now);
    changed = true;
    const evidence = f.evidence;
    if (settledMs !== undefined) f.resolvedAtMs = settledMs;
    if (prev === undefined) {
      const e: EmittedFinding = { kind: d.kind, evidenceCount: evidence.length, detectedAtMs: now };
      s.emitted[id] = e;
      if (orphan) {
        if (d.requestId !== undefined) e.requestId = d.requestId;
        if (settledMs !== undefined) {
          // Never counted in orphanedByService; onFinding(isNew) still counts it once in the total.
          e.resolvedAtMs = settledMs;
          e.counting = false;
        } else {
          e.finding = f;
          e.counting = true;
          sink.countOrphan(service, 1);
        }
      }
      sink.onFinding(f, true, lagMs);
    } else if (settledMs !== undefined) {
      // Reported before the settle, which did not resolve it on arrival (a state saved by an
      // older build without the request id): resolve it now.
      prev.resolvedAtMs = settledMs;
      if (prev.counting === true) sink.countOrphan(prev.finding?.service ?? service, -1);
      prev.counting = false;
      prev.finding = f;
      sink.onFindingResolved(f);
    } else if (evidence.length > prev.evidenceCount) {
      prev.evidenceCount = evidence.length;
      if (orphan) prev.finding = f;
      sink.onFinding(f, false, lagMs);
    }
  }
  for (const r of analysis.resumes) {
    for (const fct of r.facts) fct.counted = true;
    sink.onResume(r.outcome, service, r.traceId);
    changed = true;
  }
  return changed;
}

/**
 * The request `requestId` of `s` settled: its orphaned-progress-token findings are resolved now,
 * citing the settle as evidence (as a decision made after the settle would have).
 */
export function resolveOrphans(s: SessionState, requestId: string, now: number, sink: DecisionSink): void {
  for (const e of Object.values(s.emitted)) {
    if (e.kind !== ORPHANED_PROGRESS_TOKEN || e.requestId !== requestId || e.resolvedAtMs !== undefined) continue;
    e.resolvedAtMs = now;
    if (e.counting === true && e.finding !== undefined) sink.countOrphan(e.finding.service, -1);
    e.counting = false;
    if (e.finding !== undefined) {
      const f: Finding = { ...e.finding, resolvedAtMs: now };
      // Cite the settle as a decision made after it would have: both paths show the same evidence.
      const settled = s.requests.get(requestId)?.settled;
      if (settled !== undefined && f.evidence.length < MAX_EVIDENCE && !f.evidence.some((x) => x.spanId === settled.spanId && x.traceId === settled.traceId)) {
        f.evidence = [
          ...f.evidence,
          { traceId: settled.traceId, spanId: settled.spanId, side: settled.side, timeMs: settled.timeMs, spanName: settled.name, shows: settledShows(requestId, settled.outcome) },
        ];
      }
      e.finding = f;
      sink.onFindingResolved(f);
    }
  }
}
