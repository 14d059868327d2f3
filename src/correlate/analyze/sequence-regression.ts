import { cite } from './cite.js';
import type { ClientResumeWindow } from './client-resume-window.js';
import { RUNBOOK_FORK } from './runbook.js';
import type { SessionView } from './session-view.js';

/** sequence_regression: after a resume the client received a seq below one it had already seen. */
export function sequenceRegression(v: SessionView, w: ClientResumeWindow): void {
  const { regressed, resume: R, maxBefore, maxEv } = w;
  if (regressed === undefined) return;
  const L = R.lastEventId;
  const f0 = regressed[0]!;
  const identity = `resume:${L}`;
  let d = v.draft('sequence_regression', identity);
  if (d === undefined) {
    const oldInc = R.previousInc ?? v.serverIncOf(maxEv);
    const newInc = v.serverIncOf(f0);
    d = { kind: 'sequence_regression', identity, evidence: [], summary: '' };
    if (oldInc !== undefined) d.incarnation = oldInc;
    if (newInc !== undefined && newInc !== oldInc) d.newIncarnation = newInc;
    d.resumeCursor = L;
    d.clientAnchorMs = R.timeMs;
    d.summary =
      `session ${v.k8()}: after resuming from ${L} the client received event seq ${f0.seq} below the ${maxBefore} it had already seen: ` +
      `the server restarted the session's event log (a fork); see ${RUNBOOK_FORK}`;
    v.addDraft(d);
  }
  if (maxEv !== undefined) cite(d, maxEv, `client had received seq ${(maxEv as { seq?: number }).seq} (${maxEv.eventId}) before the resume`);
  cite(d, R, `client resumed from ${L}, answered ${R.status ?? '?'}`);
  for (const e of regressed) cite(d, e, `client received ${e.eventId} with seq ${e.seq} after the resume`);
}
