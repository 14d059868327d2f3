import type { ResumeFact, SpanFact } from '../session-state.js';
import { cite } from './cite.js';
import { is2xx } from './outcome-of-status.js';
import { RUNBOOK_FORK } from './runbook.js';
import type { SessionView } from './session-view.js';

/**
 * incarnation_changed: the client's incarnation changed without an initialize. Walks the client's
 * events, resumes and sent requests in client-time order (ties: events, then resumes, then
 * requests), merging the three ordered lists instead of sorting one list of wrappers.
 */
export function incarnationChanged(v: SessionView): void {
  new IncarnationWalk(v).run();
}

class IncarnationWalk {
  /** The client's incarnation while walking its spans in order. */
  private held: string | undefined;

  constructor(private readonly v: SessionView) {
    this.held = v.s.clientBaseline?.inc;
  }

  run(): void {
    const { client, cRes, sentReqs } = this.v;
    if (!this.allFinite()) {
      this.runSorted();
      return;
    }
    const nE = client.length;
    const nR = cRes.length;
    const nQ = sentReqs.length;
    let i = 0;
    let j = 0;
    let k = 0;
    while (i < nE || j < nR || k < nQ) {
      const te = i < nE ? client[i]!.timeMs : Infinity;
      const tr = j < nR ? cRes[j]!.timeMs : Infinity;
      const tq = k < nQ ? sentReqs[k]!.sent!.timeMs : Infinity;
      if (i < nE && te <= tr && te <= tq) {
        const e = client[i++]!;
        this.stepInc(e.inc, e.timeMs, e);
      } else if (j < nR && tr <= tq) {
        this.stepResume(cRes[j++]!);
      } else {
        const r = sentReqs[k++]!;
        if (r.method === 'initialize') this.held = undefined;
        else this.stepInc(r.sentInc, r.sent!.timeMs, r.sent!);
      }
    }
  }

  /** The merge equals a stable sort only when every time is finite. */
  private allFinite(): boolean {
    const { client, cRes, sentReqs } = this.v;
    for (const e of client) if (!Number.isFinite(e.timeMs)) return false;
    for (const r of cRes) if (!Number.isFinite(r.timeMs)) return false;
    for (const r of sentReqs) if (!Number.isFinite(r.sent!.timeMs)) return false;
    return true;
  }

  /** The walk as one sorted list, for times a merge cannot order (NaN, infinities). */
  private runSorted(): void {
    type Item = { t: number; fact: SpanFact; inc: string | undefined; resume?: ResumeFact; init?: boolean };
    const items: Item[] = [];
    for (const e of this.v.client) items.push({ t: e.timeMs, fact: e, inc: e.inc });
    for (const r of this.v.cRes) items.push({ t: r.timeMs, fact: r, inc: undefined, resume: r });
    for (const r of this.v.sentReqs) items.push({ t: r.sent!.timeMs, fact: r.sent!, inc: r.sentInc, init: r.method === 'initialize' });
    items.sort((a, b) => a.t - b.t);
    for (const it of items) {
      if (it.init === true) this.held = undefined;
      else if (it.resume !== undefined) this.stepResume(it.resume);
      else this.stepInc(it.inc, it.t, it.fact);
    }
  }

  private stepResume(r: ResumeFact): void {
    const v = this.v;
    if (r.previousInc !== undefined && this.held === undefined) this.held = r.previousInc;
    const ak = r.answeredKey;
    if (ak !== undefined) {
      const identity = `key:${ak}`;
      let d = v.draft('incarnation_changed', identity);
      if (d === undefined) {
        d = { kind: 'incarnation_changed', identity, evidence: [], summary: '' };
        if (this.held !== undefined) d.incarnation = this.held;
        d.resumeCursor = r.lastEventId;
        d.clientAnchorMs = r.timeMs;
        d.summary =
          `session ${v.k8()}: a resume from ${r.lastEventId} was answered with another session id (key ${ak.slice(0, 8)}…): ` +
          `the server replaced the session under the client; fail pending requests and re-initialize, see ${RUNBOOK_FORK}`;
        v.addDraft(d);
      }
      cite(d, r, `client resume answered with session key ${ak.slice(0, 8)}…`);
    }
    if (is2xx(r.status) && r.inc !== undefined) {
      if (this.held !== undefined && r.inc !== this.held) this.change(r.inc, r.timeMs, r, r);
      this.held = r.inc;
    }
  }

  private stepInc(inc: string | undefined, t: number, fact: SpanFact): void {
    if (inc === undefined) return;
    if (this.held !== undefined && inc !== this.held) this.change(inc, t, fact, undefined);
    this.held = inc;
  }

  private change(newInc: string, t: number, fact: SpanFact, resume: ResumeFact | undefined): void {
    const v = this.v;
    if (v.createdByOf(newInc) === 'initialize' && resume === undefined) {
      // A new life created by initialize (an id reused across reaper cycles), not reached by a resume: not a fork.
      return;
    }
    const r = resume ?? v.lastClientResumeAt(t);
    const before = this.held;
    const identity = `inc:${newInc}`;
    let d = v.draft('incarnation_changed', identity);
    if (d === undefined) {
      d = { kind: 'incarnation_changed', identity, evidence: [], summary: '' };
      if (before !== undefined) d.incarnation = before;
      d.newIncarnation = newInc;
      if (r !== undefined) {
        d.resumeCursor = r.lastEventId;
        d.clientAnchorMs = r.timeMs;
      } else {
        d.clientAnchorMs = t;
      }
      d.summary =
        `session ${v.k8()}: client moved from incarnation ${before ?? '?'} to ${newInc}` +
        `${r !== undefined ? ` on a resume from ${r.lastEventId}` : ''} without initialize: the server replaced the session under the client; ` +
        `fail pending requests and re-initialize, see ${RUNBOOK_FORK}`;
      v.addDraft(d);
    }
    if (r !== undefined && r !== resume) cite(d, r, `client resumed from ${r.lastEventId}, answered ${r.status ?? '?'}`);
    cite(d, fact, `client saw incarnation ${newInc} while holding ${before ?? '?'}`);
  }
}
