import type { Finding } from '../model/finding.js';
import { citedEvidence } from './cited-evidence.js';
import type { FindingDraft } from './analyze/types.js';
import type { SessionState } from './session-state.js';

/**
 * The {@link Finding} a session's analysis drafted, and its detection lag: ms from the earliest
 * ingest of its evidence to `detectedAtMs` (0 when the evidence has no ingest time).
 * `detectedAtMs` is the first report's time for a finding reported before.
 */
export function findingFromDraft(
  d: FindingDraft,
  id: string,
  s: SessionState,
  service: string,
  detectedAtMs: number,
  now: number,
): { finding: Finding; lagMs: number } {
  const { evidence, firstSeenMs, firstIngestMs } = citedEvidence(d.evidence, now);
  const f: Finding = {
    id,
    kind: d.kind,
    service,
    sessionKey: s.key,
    summary: d.summary,
    evidence,
    firstSeenMs,
    detectedAtMs,
  };
  if (d.incarnation !== undefined) f.incarnation = d.incarnation;
  if (d.newIncarnation !== undefined) f.newIncarnation = d.newIncarnation;
  if (d.progressToken !== undefined) f.progressToken = d.progressToken;
  if (d.requestId !== undefined) f.requestId = d.requestId;
  const lagMs = Math.max(0, f.detectedAtMs - firstIngestMs);
  return { finding: f, lagMs };
}
