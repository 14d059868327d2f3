import type { Evidence, Finding } from '../model/finding.js';

/** Most evidence items kept on one stored finding; the earliest are kept. */
export const MAX_STORED_EVIDENCE = 64;

/**
 * Combines a re-detected finding with the stored one of the same id. The first detection time
 * stays (so a finding does not jump around in paged lists), the earliest evidence time wins,
 * `resolvedAtMs` once set stays, and evidence is the union by span (a re-detection after a
 * restart may hold only part of what the first detection saw).
 */
export function mergeFinding(stored: Finding, next: Finding): Finding {
  const seen = new Set<string>();
  const evidence: Evidence[] = [];
  for (const e of [...stored.evidence, ...next.evidence]) {
    const k = `${e.traceId}/${e.spanId}`;
    if (seen.has(k)) continue;
    seen.add(k);
    evidence.push(e);
  }
  evidence.sort((a, b) => a.timeMs - b.timeMs);
  const merged: Finding = {
    ...next,
    evidence: evidence.slice(0, MAX_STORED_EVIDENCE),
    firstSeenMs: Math.min(stored.firstSeenMs, next.firstSeenMs),
    detectedAtMs: stored.detectedAtMs,
  };
  const resolved = stored.resolvedAtMs ?? next.resolvedAtMs;
  if (resolved !== undefined) merged.resolvedAtMs = resolved;
  return merged;
}
