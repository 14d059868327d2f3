import { ORPHANED_PROGRESS_TOKEN, type Finding } from '../model/finding.js';
import type { LineageIncarnation, LineageRequest, SessionLineage } from '../model/lineage.js';

/**
 * A best-effort lineage for a session the engine no longer holds (expired, or before a restart),
 * rebuilt from its stored findings: the incarnations they name and the requests they orphaned.
 * Events and resumes are not stored, so those lists are empty. `findings` must be non-empty.
 */
export function lineageFromFindings(sessionKey: string, findings: Finding[]): SessionLineage {
  const incarnations = new Map<string, LineageIncarnation>();
  const requests: LineageRequest[] = [];
  let lastActivityMs = 0;
  for (const f of findings) {
    for (const inc of [f.incarnation, f.newIncarnation]) {
      if (inc !== undefined && !incarnations.has(inc)) incarnations.set(inc, { incarnation: inc, source: 'finding', eventCount: 0 });
    }
    if (f.kind === ORPHANED_PROGRESS_TOKEN) {
      const r: LineageRequest = { requestId: f.requestId ?? '', state: f.resolvedAtMs === undefined ? 'orphaned' : 'settled' };
      if (f.progressToken !== undefined) r.progressToken = f.progressToken;
      if (f.incarnation !== undefined) r.incarnation = f.incarnation;
      requests.push(r);
    }
    lastActivityMs = Math.max(lastActivityMs, f.detectedAtMs, f.resolvedAtMs ?? 0);
  }
  return {
    sessionKey,
    service: findings[0]?.service ?? 'unknown_service',
    incarnations: [...incarnations.values()],
    events: [],
    resumes: [],
    requests,
    findingIds: findings.map((f) => f.id),
    lastActivityMs,
  };
}
