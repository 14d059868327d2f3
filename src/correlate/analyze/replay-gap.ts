import { cite } from './cite.js';
import { seqUsable, type ClientResumeWindow } from './client-resume-window.js';
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
  const missing = missingInGap(v, cursorSeq, first.seq, b);
  if (missing === 0) return;
  const identity = `resume:${L}`;
  let d = v.draft('replay_gap', identity);
  if (d === undefined) {
    d = { kind: 'replay_gap', identity, evidence: [], summary: '' };
    if (heldInc !== undefined) d.incarnation = heldInc;
    d.resumeCursor = L;
    d.clientAnchorMs = R.timeMs;
    d.summary =
      `session ${v.k8()}: the resume from ${L} (seq ${cursorSeq}) continued at seq ${first.seq}: ` +
      `${missing} event(s) were never replayed; the server must answer 409 when Last-Event-ID is not in its log, see ${RUNBOOK_FORK}`;
    v.addDraft(d);
  }
  if (cursorEv !== undefined) cite(d, cursorEv, `client's cursor ${L} had seq ${cursorSeq}`);
  cite(d, R, `client resumed from ${L}, answered ${R.status}`);
  cite(d, first, `first event after the resume has seq ${first.seq}`);
}

/**
 * How many events of the sequence gap `(lo, hi)` a resume should have replayed. Counter ids are
 * often numbered per session or per process rather than per stream (the Python SDK's stores, a
 * process-wide counter): the ids between the cursor and the next event then went to the session's
 * other streams, where the client received them, or to other sessions. So a seq the client
 * received on any stream is not missing; and where the server side recorded the session's events
 * (the proxy forwards every one; nothing dropped here), only the seqs it sent in this session with
 * a message (not an empty priming event) and the client never received are.
 */
function missingInGap(v: SessionView, lo: number, hi: number, inc: string | undefined): number {
  const got = new Set<number>();
  for (const e of v.client) if (seqUsable(e) && e.seq > lo && e.seq < hi) got.add(e.seq);
  const serverKnows = v.server.some(seqUsable) && !Object.keys(v.s.droppedEvents).some((k) => k.startsWith('server:'));
  if (!serverKnows) return hi - lo - 1 - got.size;
  const missing = new Set<number>();
  for (const e of v.server) {
    if (!seqUsable(e) || e.seq <= lo || e.seq >= hi || got.has(e.seq) || e.jsonrpcKind === 'none') continue;
    if (inc !== undefined && e.inc !== undefined && e.inc !== inc) continue;
    missing.add(e.seq);
  }
  return missing.size;
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
