import { clientResumeWindow } from './analyze/client-resume-window.js';
import { cite } from './analyze/cite.js';
import { countResumes } from './analyze/count-resumes.js';
import { dedupLoss } from './analyze/dedup-loss.js';
import { incarnationChanged } from './analyze/incarnation-changed.js';
import { mintedOnResume } from './analyze/minted-on-resume.js';
import { orphanedProgressTokens } from './analyze/orphaned-progress-tokens.js';
import { clientReplayGap, serverReplayGap } from './analyze/replay-gap.js';
import { serverReplayOrder } from './analyze/replay-order.js';
import { sequenceRegression } from './analyze/sequence-regression.js';
import { SessionView } from './analyze/session-view.js';
import type { SessionAnalysis } from './analyze/types.js';
import type { SessionState } from './session-state.js';

export { MAX_EVIDENCE } from './analyze/cite.js';
export { describeEvent, settledShows } from './analyze/describe-event.js';
export { outcomeOfStatus } from './analyze/outcome-of-status.js';
export type { FindingDraft, ResumeDecision, SessionAnalysis } from './analyze/types.js';

/**
 * Decides what a session's spans show: fork findings, orphaned progress tokens, and the resumes
 * not yet counted. A pure function of the state (never of the order spans arrived in), so
 * deciding again after late spans yields the same identities and the engine only reports what is
 * new. The rules live one per file in ./analyze/.
 */
export function analyzeSession(s: SessionState): SessionAnalysis {
  const v = new SessionView(s);
  const stateless = s.stateless || (v.hasServerSpans() && s.created.length === 0 && isEmpty(s.knownIncarnations) && !v.anyServerInc());
  if (!stateless) {
    mintedOnResume(v);
    incarnationChanged(v);
    for (let i = 0; i < v.cRes.length; i++) {
      const w = clientResumeWindow(v, i);
      sequenceRegression(v, w);
      clientReplayGap(v, w);
    }
    serverReplayGap(v);
    serverReplayOrder(v);
    dedupLoss(v);
    for (const g of v.guardForks) {
      const kind = g.forkKind === 'session_id_changed' ? 'incarnation_changed' : g.forkKind;
      for (const d of v.drafts.values()) if (d.kind === kind) cite(d, g, `client guard raised SessionForkError ${g.forkKind}`);
    }
  }
  orphanedProgressTokens(v);
  const { resumes, marked } = countResumes(v, stateless);
  return { findings: [...v.drafts.values()], resumes, marked };
}

function isEmpty(o: Record<string, unknown>): boolean {
  for (const _ in o) return false;
  return true;
}
