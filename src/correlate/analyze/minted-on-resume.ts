import { byTime } from './fact-order.js';
import { cite } from './cite.js';
import { RUNBOOK_FORK } from './runbook.js';
import type { SessionView } from './session-view.js';

/** minted_on_resume: the server allocated session state on something other than initialize. */
export function mintedOnResume(v: SessionView): void {
  const { s, sRes, cRes } = v;
  let minted = false;
  for (const c of s.created) if (c.createdBy !== 'initialize') minted = true;
  if (minted) {
    const createdSorted = [...s.created].sort(byTime);
    for (const c of createdSorted) {
      if (c.createdBy === 'initialize') continue;
      let prev: (typeof createdSorted)[number] | undefined;
      for (let j = createdSorted.length - 1; j >= 0; j--) {
        const p = createdSorted[j]!;
        if (p.timeMs < c.timeMs && p.inc !== c.inc) {
          prev = p;
          break;
        }
      }
      const cursor = c.lastEventId;
      const identity = `inc:${c.inc}`;
      let d = v.draft('minted_on_resume', identity);
      if (d === undefined) {
        d = { kind: 'minted_on_resume', identity, evidence: [], summary: '' };
        if (prev !== undefined) d.incarnation = prev.inc;
        d.newIncarnation = c.inc;
        if (cursor !== undefined) d.resumeCursor = cursor;
        d.summary =
          `session ${v.k8()}: server minted a new incarnation ${c.inc} on a ${c.createdBy} request` +
          `${cursor !== undefined ? ` resuming from Last-Event-ID ${cursor}` : ''}` +
          `${c.clientSuppliedId === true ? ' under the client\'s old session id' : ''} instead of answering 404; ` +
          `the client's event log and pending requests are gone: make the server answer 404 on unknown sessions, see ${RUNBOOK_FORK}`;
        v.addDraft(d);
      }
      cite(d, c, `server created incarnation ${c.inc} on ${c.createdBy}${cursor !== undefined ? ` (Last-Event-ID ${cursor})` : ''}`);
      const ended = prev !== undefined ? v.ended.find((e) => e.inc === prev.inc) : undefined;
      if (ended !== undefined) cite(d, ended, `server ended incarnation ${ended.inc} (${ended.reason})`);
      for (const r of sRes) {
        if (r.inc === c.inc || (cursor !== undefined && r.lastEventId === cursor)) {
          cite(d, r, `server answered resume from ${r.lastEventId} with ${r.status ?? '?'} on incarnation ${r.inc ?? '?'}`);
        }
      }
      for (const r of cRes) if (cursor !== undefined && r.lastEventId === cursor) cite(d, r, `client resumed from ${cursor}, answered ${r.status ?? '?'}`);
    }
  }
  for (const r of sRes) {
    if (r.outcome !== 'forked') continue;
    const identity = r.inc !== undefined ? `inc:${r.inc}` : `resume:${r.lastEventId}`;
    let d = v.draft('minted_on_resume', identity);
    if (d === undefined) {
      d = { kind: 'minted_on_resume', identity, evidence: [], summary: '' };
      if (r.inc !== undefined) d.newIncarnation = r.inc;
      d.resumeCursor = r.lastEventId;
      d.summary =
        `session ${v.k8()}: server answered a resume from Last-Event-ID ${r.lastEventId} with a new incarnation instead of 404; ` +
        `make the server answer 404 on unknown sessions, see ${RUNBOOK_FORK}`;
      v.addDraft(d);
    }
    cite(d, r, `server classified its resume from ${r.lastEventId} as forked`);
  }
}
