import type { ResumeFact } from '../session-state.js';
import { outcomeOfStatus } from './outcome-of-status.js';
import type { SessionView } from './session-view.js';
import type { ResumeDecision } from './types.js';

/**
 * Resumes not yet counted, each once: the i-th client and i-th server resume from one cursor are
 * one resume. `marked`: a fact was marked counted because its other half already was (a change
 * to the state that reports nothing, yet must be saved like one that does).
 */
export function countResumes(v: SessionView, stateless: boolean): { resumes: ResumeDecision[]; marked: boolean } {
  const { cRes, sRes } = v;
  if (cRes.length + sRes.length === 0) return { resumes: [], marked: false };
  let marked = false;
  const forkCursors = new Set<string>();
  const forkIncs = new Set<string>();
  for (const f of v.drafts.values()) {
    if (f.kind === 'orphaned_progress_token') continue;
    if (f.resumeCursor !== undefined) forkCursors.add(f.resumeCursor);
    if (f.newIncarnation !== undefined) forkIncs.add(f.newIncarnation);
  }
  const resumes: ResumeDecision[] = [];
  const cursors = new Set<string>();
  for (const r of cRes) cursors.add(r.lastEventId);
  for (const r of sRes) cursors.add(r.lastEventId);
  for (const L of cursors) {
    const cs: ResumeFact[] = [];
    const ss: ResumeFact[] = [];
    for (const r of cRes) if (r.lastEventId === L) cs.push(r);
    for (const r of sRes) if (r.lastEventId === L) ss.push(r);
    for (let i = 0; i < Math.max(cs.length, ss.length); i++) {
      const c = cs[i];
      const sv = ss[i];
      const facts: ResumeFact[] = [];
      if (sv !== undefined) facts.push(sv);
      if (c !== undefined) facts.push(c);
      if (sv?.counted === true || c?.counted === true) {
        for (const x of facts) {
          if (x.counted !== true) marked = true;
          x.counted = true;
        }
        continue;
      }
      const primary = facts[0]!;
      let outcome = outcomeOfStatus(primary.status, primary.outcome);
      const forked =
        forkCursors.has(L) ||
        sv?.outcome === 'forked' ||
        (sv?.inc !== undefined && forkIncs.has(sv.inc)) ||
        c?.answeredKey !== undefined ||
        (c?.inc !== undefined && forkIncs.has(c.inc));
      if (forked && !stateless) outcome = 'forked';
      resumes.push({ outcome, traceId: primary.traceId, facts });
    }
  }
  return { resumes, marked };
}
