import { cite } from './cite.js';
import type { ClientResumeWindow } from './client-resume-window.js';
import { is2xx } from './outcome-of-status.js';
import { RUNBOOK_FORK } from './runbook.js';
import type { SessionView } from './session-view.js';

/** Client-side replay_gap: a 2xx resume continued past events after the cursor that never came. */
export function clientReplayGap(v: SessionView, w: ClientResumeWindow): void {
  const { resume: R, cursorSeq, first, cursorEv } = w;
  if (!is2xx(R.status) || cursorSeq === undefined || first === undefined || !(first.seq > cursorSeq + 1)) return;
  const L = R.lastEventId;
  const heldInc = R.previousInc ?? cursorEv?.inc ?? v.s.clientBaseline?.inc;
  const a = v.serverIncOf(first);
  const b = heldInc ?? v.serverIncOf(cursorEv);
  if (a !== undefined && b !== undefined && a !== b) return;
  const identity = `resume:${L}`;
  let d = v.draft('replay_gap', identity);
  if (d === undefined) {
    d = { kind: 'replay_gap', identity, evidence: [], summary: '' };
    if (heldInc !== undefined) d.incarnation = heldInc;
    d.resumeCursor = L;
    d.clientAnchorMs = R.timeMs;
    d.summary =
      `session ${v.k8()}: the resume from ${L} (seq ${cursorSeq}) continued at seq ${first.seq}: ` +
      `${first.seq - cursorSeq - 1} event(s) were never replayed; the server must answer 409 when Last-Event-ID is not in its log, see ${RUNBOOK_FORK}`;
    v.addDraft(d);
  }
  if (cursorEv !== undefined) cite(d, cursorEv, `client's cursor ${L} had seq ${cursorSeq}`);
  cite(d, R, `client resumed from ${L}, answered ${R.status}`);
  cite(d, first, `first event after the resume has seq ${first.seq}`);
}

/** Server-side replay_gap: a 2xx resume whose cursor is not in the serving incarnation's log. */
export function serverReplayGap(v: SessionView): void {
  const s = v.s;
  for (const r of v.sRes) {
    if (!is2xx(r.status)) continue;
    const cb = v.createdByOf(r.inc);
    if (cb !== undefined && cb !== 'initialize') continue; // minted: reported as minted_on_resume
    if (r.outcome === 'forked') continue;
    let gap = r.found === false;
    if (r.found === undefined && r.inc !== undefined && v.createdHere(r.inc) && !s.droppedEvents[`server:${r.inc}`]) {
      let any = false;
      let has = false;
      for (const e of v.server) {
        if (e.inc !== r.inc) continue;
        any = true;
        if (e.eventId === r.lastEventId) {
          has = true;
          break;
        }
      }
      gap = any && !has;
    }
    if (!gap) continue;
    const identity = `resume:${r.lastEventId}`;
    let d = v.draft('replay_gap', identity);
    if (d === undefined) {
      d = { kind: 'replay_gap', identity, evidence: [], summary: '' };
      if (r.inc !== undefined) d.incarnation = r.inc;
      d.resumeCursor = r.lastEventId;
      d.summary =
        `session ${v.k8()}: server answered ${r.status} to a resume from ${r.lastEventId}, which is not in incarnation ${r.inc ?? '?'}'s event log: ` +
        `events were skipped or replayed from the start; the server must answer 409 in that case, see ${RUNBOOK_FORK}`;
      v.addDraft(d);
    }
    cite(d, r, `server answered ${r.status} though ${r.lastEventId} is not in its log`);
  }
}
