import type { FindingKind } from '../../model/finding.js';
import type { EndedFact, EventFact, GuardForkFact, RequestFact, ResumeFact, SessionState } from '../session-state.js';
import { byRequestId, bySentTime, sortByTime } from './fact-order.js';
import type { FindingDraft } from './types.js';

/**
 * One session's facts prepared for the rules: split by side, each list in {@link byTime} order,
 * and the drafts found so far. Built once per decision; the rules (one file each in this folder)
 * read it and add drafts. Methods rather than per-call closures: a decision runs for every
 * session at every window.
 */
export class SessionView {
  readonly client: EventFact[] = [];
  readonly server: EventFact[] = [];
  readonly cRes: ResumeFact[] = [];
  readonly sRes: ResumeFact[] = [];
  /** Server session ends, and guard fork reports, in time order. */
  readonly ended: EndedFact[];
  readonly guardForks: GuardForkFact[];
  /** Client initialize requests' send times, ascending. */
  readonly clientInits: number[] = [];
  /** Requests the client sent, by send time (ties: request id). */
  readonly sentReqs: RequestFact[] = [];
  /** Requests with a progress token, by request id. */
  readonly tokenReqs: RequestFact[] = [];
  anyReceived = false;
  anyReceivedInc = false;
  readonly drafts = new Map<string, FindingDraft>();
  private serverByIdMap: Map<string, EventFact[]> | undefined;
  private k8Text: string | undefined;

  constructor(readonly s: SessionState) {
    const { client, server, cRes, sRes } = this;
    for (const e of s.events) (e.side === 'client' ? client : server).push(e);
    sortByTime(client);
    sortByTime(server);
    for (const r of s.resumes) (r.side === 'client' ? cRes : sRes).push(r);
    sortByTime(cRes);
    sortByTime(sRes);
    this.ended = sortByTime([...s.ended]);
    this.guardForks = sortByTime([...s.guardForks]);
    for (const r of s.requests.values()) {
      if (r.received) {
        this.anyReceived = true;
        if (r.received.inc !== undefined) this.anyReceivedInc = true;
      }
      if (r.sent !== undefined) {
        this.sentReqs.push(r);
        if (r.method === 'initialize') this.clientInits.push(r.sent.timeMs);
      }
      if (r.progressToken !== undefined) this.tokenReqs.push(r);
    }
    sortIfNeeded(this.clientInits, (a, b) => a - b);
    sortIfNeeded(this.sentReqs, bySentTime);
    sortIfNeeded(this.tokenReqs, byRequestId);
  }

  /** Any server-side span at all for this session (else client evidence stands alone). */
  hasServerSpans(): boolean {
    return this.server.length > 0 || this.sRes.length > 0 || this.ended.length > 0 || this.anyReceived;
  }

  anyServerInc(): boolean {
    for (const e of this.server) if (e.inc !== undefined) return true;
    for (const r of this.sRes) if (r.inc !== undefined) return true;
    return this.anyReceivedInc;
  }

  /** The session key's first 8 characters, for summaries. */
  k8(): string {
    return (this.k8Text ??= `${this.s.key.slice(0, 8)}…`);
  }

  draft(kind: FindingKind, identity: string): FindingDraft | undefined {
    return this.drafts.get(`${kind}\u0000${identity}`);
  }

  addDraft(d: FindingDraft): FindingDraft {
    this.drafts.set(`${d.kind}\u0000${d.identity}`, d);
    return d;
  }

  createdHere(inc: string): boolean {
    for (const c of this.s.created) if (c.inc === inc) return true;
    return false;
  }

  createdByOf(inc: string | undefined): string | undefined {
    if (inc === undefined) return undefined;
    for (const c of this.s.created) if (c.inc === inc) return c.createdBy;
    return this.s.knownIncarnations[inc];
  }

  serverById(): Map<string, EventFact[]> {
    let m = this.serverByIdMap;
    if (m === undefined) {
      m = new Map();
      for (const e of this.server) {
        const l = m.get(e.eventId);
        if (l === undefined) m.set(e.eventId, [e]);
        else l.push(e);
      }
      this.serverByIdMap = m;
    }
    return m;
  }

  /** A naive server sends no incarnation: maps a client event to the server's (observed) one by id and payload. */
  serverIncOf(e: EventFact | undefined): string | undefined {
    if (e === undefined) return undefined;
    if (e.inc !== undefined) return e.inc;
    let only: string | undefined;
    for (const o of this.serverById().get(e.eventId) ?? []) {
      if (o.inc !== undefined && (e.digest === undefined || o.digest === undefined || o.digest === e.digest)) {
        if (only === undefined) only = o.inc;
        else if (only !== o.inc) return undefined;
      }
    }
    return only;
  }

  lastClientResumeAt(t: number): ResumeFact | undefined {
    let found: ResumeFact | undefined;
    for (const r of this.cRes) if (r.timeMs <= t) found = r;
    return found;
  }
}

function sortIfNeeded<T>(xs: T[], cmp: (a: T, b: T) => number): void {
  for (let i = 1; i < xs.length; i++) {
    if (!(cmp(xs[i - 1]!, xs[i]!) <= 0)) {
      xs.sort(cmp);
      return;
    }
  }
}
