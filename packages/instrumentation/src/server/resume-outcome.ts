/** `forkwatch.resume.outcome` values. */
export type ResumeOutcome = 'resumed' | 'rejected_404' | 'rejected_gap' | 'rejected_other' | 'forked';

/**
 * Classifies a resume by the status answered. `createdHere`: the serving incarnation was created
 * by this very request, so a 2xx is a minted replacement, not a resumption.
 */
export function resumeOutcome(status: number, createdHere: boolean): ResumeOutcome {
  if (status === 404 || status === 410) return 'rejected_404';
  if (status === 409) return 'rejected_gap';
  if (status >= 200 && status < 300) return createdHere ? 'forked' : 'resumed';
  return 'rejected_other';
}
