import type { ResumeOutcome } from '../../model/finding.js';

/** Whether an HTTP status is a success (2xx). */
export const is2xx = (st: number | undefined): boolean => st !== undefined && st >= 200 && st < 300;

/**
 * Outcome of a resume from its status code alone (before escalation to `forked`): 2xx `resumed`,
 * 404/410 `rejected_404`, 409 `rejected_gap`, any other status (a 400 as server-everything
 * answers, a 500) or none `rejected_other`.
 */
export function outcomeOfStatus(status: number | undefined, fallback?: string): ResumeOutcome {
  if (status === undefined) {
    if (fallback === 'resumed' || fallback === 'rejected_404' || fallback === 'rejected_gap' || fallback === 'forked') return fallback;
    return 'rejected_other';
  }
  if (is2xx(status)) return 'resumed';
  if (status === 404 || status === 410) return 'rejected_404';
  if (status === 409) return 'rejected_gap';
  return 'rejected_other';
}
