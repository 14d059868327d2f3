import type { Finding } from '../../src/model/finding.js';

/** A valid Finding for storage tests; `over` replaces any field. */
export function makeFinding(over: Partial<Finding> & { id: string }): Finding {
  return {
    kind: 'minted_on_resume',
    service: 'svc-a',
    sessionKey: 'k'.repeat(32),
    summary: 'server minted a new incarnation on a resume',
    evidence: [
      { traceId: 'a'.repeat(32), spanId: over.id.padEnd(16, '0').slice(0, 16), side: 'server', timeMs: 1000, spanName: 'forkwatch.resume', shows: 'resume answered 200' },
    ],
    firstSeenMs: 1000,
    detectedAtMs: 2000,
    ...over,
  };
}
