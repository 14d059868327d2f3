import type { FindingKind, ResumeOutcome } from '../model/finding.js';
import type { EventFact, RequestFact, ResumeFact, SessionState, SpanFact } from './session-state.js';

/** A finding as analysis sees it, before the engine gives it an id, service and times. */
export interface FindingDraft {
  kind: FindingKind;
  /** What identifies the fork (or request) within the session: part of the finding id. */
  identity: string;
  incarnation?: string;
  newIncarnation?: string;
  requestId?: string;
  progressToken?: string;
  summary: string;
  evidence: Array<{ fact: SpanFact; shows: string }>;
  /** Last-Event-ID of the resume the fork is attributed to, when known. */
  resumeCursor?: string;
  /** Client-clock time at which the client met the fork, when client spans show it. */
  clientAnchorMs?: number;
  /**
   * Orphans whose request had already settled without an answer when decided: detector-clock ms
   * at which the settle was ingested (what the engine would have set had it reported the orphan
   * before the settle arrived).
   */
  resolvedAtMs?: number;
}

/** One resume (one or two spans: client and server) to count once. */
export interface ResumeDecision {
  outcome: ResumeOutcome;
  traceId: string;
  facts: ResumeFact[];
}

export interface SessionAnalysis {
  findings: FindingDraft[];
  resumes: ResumeDecision[];
}

const RUNBOOK_FORK = 'docs/runbook.md#mcpsessionforkdetected';
const RUNBOOK_ORPHAN = 'docs/runbook.md#mcporphanedprogresstokens';
/** Evidence spans listed per finding: enough to investigate, bounded so findings stay small. */
export const MAX_EVIDENCE = 16;

const byTime = (a: SpanFact, b: SpanFact): number => a.timeMs - b.timeMs;
const seqUsable = (e: EventFact): e is EventFact & { seq: number } =>
  e.seq !== undefined && (e.seqSource === 'server' || e.seqSource === 'counter');
const is2xx = (st: number | undefined): boolean => st !== undefined && st >= 200 && st < 300;
const hasPayload = (e: EventFact): boolean => e.jsonrpcKind !== 'none' && e.delivery !== 'no_payload';

/**
 * `forkwatch.request.outcome` values of a request that ended without its answer: when it was
 * orphaned while pending, it was an orphan even though it settled before the decision. Not here:
 * `answered` and `error` (a real JSON-RPC answer came, e.g. replayed) and `failed_session_lost`
 * (a guard failed it at once on the server's 404: the designed recovery of a guarded server and
 * client, which must stay free of findings).
 */
const ORPHAN_SETTLE_OUTCOMES: ReadonlySet<string> = new Set(['timeout', 'transport_error', 'cancelled', 'failed_fork']);

/** Outcome of a resume from its status code alone (before escalation to `forked`). */
export function outcomeOfStatus(status: number | undefined, fallback?: string): ResumeOutcome {
  if (status === undefined) {
    if (fallback === 'resumed' || fallback === 'rejected_404' || fallback === 'rejected_gap' || fallback === 'forked') return fallback;
    return 'rejected_other';
  }
  if (status >= 200 && status < 300) return 'resumed';
  if (status === 404 || status === 410) return 'rejected_404';
  if (status === 409) return 'rejected_gap';
  return 'rejected_other';
}

/**
 * Decides what a session's spans show: fork findings, orphaned progress tokens, and the resumes
 * not yet counted. A pure function of the state, so deciding again after late spans yields the
 * same identities and the engine only reports what is new.
 */
export function analyzeSession(s: SessionState): SessionAnalysis {
  return new SessionAnalyzer(s).run();
}

/**
 * Stable in-place order by span time, skipping the sort when already in order (the common case:
 * spans of one side mostly arrive in the order they started). Same result as `xs.sort(byTime)`.
 */
function sortByTime<T extends SpanFact>(xs: T[]): T[] {
  for (let i = 1; i < xs.length; i++) if (!(xs[i - 1]!.timeMs <= xs[i]!.timeMs)) return xs.sort(byTime);
  return xs;
}

const bySentTime = (a: RequestFact, b: RequestFact): number => a.sent!.timeMs - b.sent!.timeMs;
const byNumber = (a: number, b: number): number => a - b;

function isEmpty(o: Record<string, unknown>): boolean {
  for (const _ in o) return false;
  return true;
}

/**
 * One decision over one session's state. The steps are methods rather than closures made per
 * call: a decision runs for every session at every window, and per-call closures, spreads and
 * intermediate arrays were most of its cost. Reads the state; writes only `counted` on resumes.
 */
class SessionAnalyzer {
  private readonly client: EventFact[] = [];
  private readonly server: EventFact[] = [];
  private readonly cRes: ResumeFact[] = [];
  private readonly sRes: ResumeFact[] = [];
  /** Client initialize requests' send times, ascending. */
  private readonly clientInits: number[] = [];
  /** Requests the client sent, in map order (stably ordered by send time when needed). */
  private readonly sentReqs: RequestFact[] = [];
  /** Requests with a progress token, in map order. */
  private readonly tokenReqs: RequestFact[] = [];
  private anyReceived = false;
  private anyReceivedInc = false;
  private readonly drafts = new Map<string, FindingDraft>();
  private serverByIdMap: Map<string, EventFact[]> | undefined;
  private k8Text: string | undefined;
  /** The client's incarnation while walking its spans in order (incarnation_changed). */
  private held: string | undefined;

  constructor(private readonly s: SessionState) {}

  run(): SessionAnalysis {
    const s = this.s;
    const { client, server, cRes, sRes } = this;
    for (const e of s.events) (e.side === 'client' ? client : server).push(e);
    sortByTime(client);
    sortByTime(server);
    for (const r of s.resumes) (r.side === 'client' ? cRes : sRes).push(r);
    sortByTime(cRes);
    sortByTime(sRes);
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
    const inits = this.clientInits;
    for (let i = 1; i < inits.length; i++) {
      if (!(inits[i - 1]! <= inits[i]!)) {
        inits.sort(byNumber);
        break;
      }
    }

    const hasServerSpans = server.length > 0 || sRes.length > 0 || s.ended.length > 0 || this.anyReceived;
    const stateless =
      s.stateless || (hasServerSpans && s.created.length === 0 && isEmpty(s.knownIncarnations) && !this.anyServerInc());

    if (!stateless) {
      this.mintedOnResume();
      this.incarnationChanged();
      this.perClientResume();
      this.serverReplayGap();
      this.dedupLoss();
      for (const g of s.guardForks) {
        const kind = g.forkKind === 'session_id_changed' ? 'incarnation_changed' : g.forkKind;
        for (const d of this.drafts.values()) if (d.kind === kind) cite(d, g, `client guard raised SessionForkError ${g.forkKind}`);
      }
    }
    this.orphans();
    const resumes = cRes.length + sRes.length > 0 ? this.countResumes(stateless) : [];
    return { findings: [...this.drafts.values()], resumes };
  }

  private anyServerInc(): boolean {
    for (const e of this.server) if (e.inc !== undefined) return true;
    for (const r of this.sRes) if (r.inc !== undefined) return true;
    return this.anyReceivedInc;
  }

  private k8(): string {
    return (this.k8Text ??= `${this.s.key.slice(0, 8)}…`);
  }

  private draft(kind: FindingKind, identity: string): FindingDraft | undefined {
    return this.drafts.get(`${kind}\u0000${identity}`);
  }

  private addDraft(d: FindingDraft): FindingDraft {
    this.drafts.set(`${d.kind}\u0000${d.identity}`, d);
    return d;
  }

  private createdHere(inc: string): boolean {
    for (const c of this.s.created) if (c.inc === inc) return true;
    return false;
  }

  private createdByOf(inc: string | undefined): string | undefined {
    if (inc === undefined) return undefined;
    for (const c of this.s.created) if (c.inc === inc) return c.createdBy;
    return this.s.knownIncarnations[inc];
  }

  private serverById(): Map<string, EventFact[]> {
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
  private serverIncOf(e: EventFact | undefined): string | undefined {
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

  private lastClientResumeAt(t: number): ResumeFact | undefined {
    let found: ResumeFact | undefined;
    for (const r of this.cRes) if (r.timeMs <= t) found = r;
    return found;
  }

  // ---- minted_on_resume: the server allocated state on something other than initialize ----
  private mintedOnResume(): void {
    const { s, sRes, cRes } = this;
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
        let d = this.draft('minted_on_resume', identity);
        if (d === undefined) {
          d = { kind: 'minted_on_resume', identity, evidence: [], summary: '' };
          if (prev !== undefined) d.incarnation = prev.inc;
          d.newIncarnation = c.inc;
          if (cursor !== undefined) d.resumeCursor = cursor;
          d.summary =
            `session ${this.k8()}: server minted a new incarnation ${c.inc} on a ${c.createdBy} request` +
            `${cursor !== undefined ? ` resuming from Last-Event-ID ${cursor}` : ''}` +
            `${c.clientSuppliedId === true ? ' under the client\'s old session id' : ''} instead of answering 404; ` +
            `the client's event log and pending requests are gone: make the server answer 404 on unknown sessions, see ${RUNBOOK_FORK}`;
          this.addDraft(d);
        }
        cite(d, c, `server created incarnation ${c.inc} on ${c.createdBy}${cursor !== undefined ? ` (Last-Event-ID ${cursor})` : ''}`);
        const ended = prev !== undefined ? s.ended.find((e) => e.inc === prev.inc) : undefined;
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
      let d = this.draft('minted_on_resume', identity);
      if (d === undefined) {
        d = { kind: 'minted_on_resume', identity, evidence: [], summary: '' };
        if (r.inc !== undefined) d.newIncarnation = r.inc;
        d.resumeCursor = r.lastEventId;
        d.summary =
          `session ${this.k8()}: server answered a resume from Last-Event-ID ${r.lastEventId} with a new incarnation instead of 404; ` +
          `make the server answer 404 on unknown sessions, see ${RUNBOOK_FORK}`;
        this.addDraft(d);
      }
      cite(d, r, `server classified its resume from ${r.lastEventId} as forked`);
    }
  }

  // ---- incarnation_changed: the client's incarnation changed without an initialize ----
  /**
   * Walks the client's events, resumes and sent requests in client-time order (ties: events,
   * then resumes, then requests, as a stable sort of the three lists in that order would give),
   * merging the three sorted lists instead of sorting one list of wrappers.
   */
  private incarnationChanged(): void {
    const { client, cRes, sentReqs } = this;
    this.held = this.s.clientBaseline?.inc;
    for (let i = 1; i < sentReqs.length; i++) {
      if (!(sentReqs[i - 1]!.sent!.timeMs <= sentReqs[i]!.sent!.timeMs)) {
        sentReqs.sort(bySentTime);
        break;
      }
    }
    if (!this.allFinite()) {
      this.incarnationChangedSorted();
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

  /** The merge in {@link incarnationChanged} equals a stable sort only when every time is finite. */
  private allFinite(): boolean {
    for (const e of this.client) if (!Number.isFinite(e.timeMs)) return false;
    for (const r of this.cRes) if (!Number.isFinite(r.timeMs)) return false;
    for (const r of this.sentReqs) if (!Number.isFinite(r.sent!.timeMs)) return false;
    return true;
  }

  /** The walk of {@link incarnationChanged} as one sorted list, for times a merge cannot order (NaN, infinities). */
  private incarnationChangedSorted(): void {
    type Item = { t: number; fact: SpanFact; inc: string | undefined; resume?: ResumeFact; init?: boolean };
    const items: Item[] = [];
    for (const e of this.client) items.push({ t: e.timeMs, fact: e, inc: e.inc });
    for (const r of this.cRes) items.push({ t: r.timeMs, fact: r, inc: undefined, resume: r });
    for (const r of this.s.requests.values()) {
      if (r.sent !== undefined) items.push({ t: r.sent.timeMs, fact: r.sent, inc: r.sentInc, init: r.method === 'initialize' });
    }
    items.sort((a, b) => a.t - b.t);
    for (const it of items) {
      if (it.init === true) this.held = undefined;
      else if (it.resume !== undefined) this.stepResume(it.resume);
      else this.stepInc(it.inc, it.t, it.fact);
    }
  }

  private stepResume(r: ResumeFact): void {
    if (r.previousInc !== undefined && this.held === undefined) this.held = r.previousInc;
    const ak = r.answeredKey;
    if (ak !== undefined) {
      const identity = `key:${ak}`;
      let d = this.draft('incarnation_changed', identity);
      if (d === undefined) {
        d = { kind: 'incarnation_changed', identity, evidence: [], summary: '' };
        if (this.held !== undefined) d.incarnation = this.held;
        d.resumeCursor = r.lastEventId;
        d.clientAnchorMs = r.timeMs;
        d.summary =
          `session ${this.k8()}: a resume from ${r.lastEventId} was answered with another session id (key ${ak.slice(0, 8)}…): ` +
          `the server replaced the session under the client; fail pending requests and re-initialize, see ${RUNBOOK_FORK}`;
        this.addDraft(d);
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
    if (this.createdByOf(newInc) === 'initialize' && resume === undefined) {
      // A new life created by initialize (an id reused across reaper cycles), not reached by a resume: not a fork.
      return;
    }
    const r = resume ?? this.lastClientResumeAt(t);
    const before = this.held;
    const identity = `inc:${newInc}`;
    let d = this.draft('incarnation_changed', identity);
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
        `session ${this.k8()}: client moved from incarnation ${before ?? '?'} to ${newInc}` +
        `${r !== undefined ? ` on a resume from ${r.lastEventId}` : ''} without initialize: the server replaced the session under the client; ` +
        `fail pending requests and re-initialize, see ${RUNBOOK_FORK}`;
      this.addDraft(d);
    }
    if (r !== undefined && r !== resume) cite(d, r, `client resumed from ${r.lastEventId}, answered ${r.status ?? '?'}`);
    cite(d, fact, `client saw incarnation ${newInc} while holding ${before ?? '?'}`);
  }

  // ---- per client resume: sequence_regression and client-side replay_gap ----
  private perClientResume(): void {
    const { client, cRes, clientInits } = this;
    const base = this.s.clientBaseline;
    for (let i = 0; i < cRes.length; i++) {
      const R = cRes[i]!;
      const L = R.lastEventId;
      let lastInit = -Infinity;
      for (let j = clientInits.length - 1; j >= 0; j--) {
        if (clientInits[j]! <= R.timeMs) {
          lastInit = clientInits[j]!;
          break;
        }
      }
      let nextInit = Infinity;
      for (const t of clientInits) {
        if (t > R.timeMs) {
          nextInit = t;
          break;
        }
      }
      let nextRes = Infinity;
      for (let j = i + 1; j < cRes.length; j++) {
        if (cRes[j]!.timeMs > R.timeMs) {
          nextRes = cRes[j]!.timeMs;
          break;
        }
      }
      const endT = Math.min(nextInit, nextRes);
      // Before the resume (since the last initialize): the highest seq, and the cursor's event.
      let maxBefore: number | undefined;
      let maxEv: EventFact | undefined;
      let cursorEv: EventFact | undefined;
      for (const e of client) {
        if (!(e.timeMs < R.timeMs && e.timeMs >= lastInit)) continue;
        if (seqUsable(e) && (maxBefore === undefined || e.seq > maxBefore)) {
          maxBefore = e.seq;
          maxEv = e;
        }
        if (e.eventId === L) cursorEv = e;
      }
      if (base?.maxSeq !== undefined && base.timeMs < R.timeMs && base.timeMs >= lastInit) {
        maxBefore = Math.max(maxBefore ?? base.maxSeq, base.maxSeq);
      }
      let cursorSeq: number | undefined = cursorEv !== undefined && seqUsable(cursorEv) ? cursorEv.seq : undefined;
      if (cursorSeq === undefined && base?.lastEventId === L) cursorSeq = base.maxSeq;

      // After the resume (until the next initialize or resume): events at or before the cursor
      // below the highest seen (a true replay only yields events after the cursor), and the
      // first event with a usable seq.
      let regressed: EventFact[] | undefined;
      let regressedCount = 0;
      let first: (EventFact & { seq: number }) | undefined;
      for (const e of client) {
        if (!(e.timeMs >= R.timeMs && e.timeMs < endT) || !seqUsable(e)) continue;
        first ??= e;
        if (maxBefore !== undefined && e.seq < maxBefore && (cursorSeq === undefined || e.seq <= cursorSeq)) {
          if (regressedCount++ < 4) (regressed ??= []).push(e);
        }
      }

      if (regressed !== undefined) {
        const f0 = regressed[0]!;
        const identity = `resume:${L}`;
        let d = this.draft('sequence_regression', identity);
        if (d === undefined) {
          const oldInc = R.previousInc ?? this.serverIncOf(maxEv);
          const newInc = this.serverIncOf(f0);
          d = { kind: 'sequence_regression', identity, evidence: [], summary: '' };
          if (oldInc !== undefined) d.incarnation = oldInc;
          if (newInc !== undefined && newInc !== oldInc) d.newIncarnation = newInc;
          d.resumeCursor = L;
          d.clientAnchorMs = R.timeMs;
          d.summary =
            `session ${this.k8()}: after resuming from ${L} the client received event seq ${f0.seq} below the ${maxBefore} it had already seen: ` +
            `the server restarted the session's event log (a fork); see ${RUNBOOK_FORK}`;
          this.addDraft(d);
        }
        if (maxEv !== undefined) cite(d, maxEv, `client had received seq ${maxEv.seq} (${maxEv.eventId}) before the resume`);
        cite(d, R, `client resumed from ${L}, answered ${R.status ?? '?'}`);
        for (const e of regressed) cite(d, e, `client received ${e.eventId} with seq ${e.seq} after the resume`);
      }

      if (is2xx(R.status) && cursorSeq !== undefined && first !== undefined && first.seq > cursorSeq + 1) {
        const heldInc = R.previousInc ?? cursorEv?.inc ?? base?.inc;
        const a = this.serverIncOf(first);
        const b = heldInc ?? this.serverIncOf(cursorEv);
        if (a === undefined || b === undefined || a === b) {
          const identity = `resume:${L}`;
          let d = this.draft('replay_gap', identity);
          if (d === undefined) {
            d = { kind: 'replay_gap', identity, evidence: [], summary: '' };
            if (heldInc !== undefined) d.incarnation = heldInc;
            d.resumeCursor = L;
            d.clientAnchorMs = R.timeMs;
            d.summary =
              `session ${this.k8()}: the resume from ${L} (seq ${cursorSeq}) continued at seq ${first.seq}: ` +
              `${first.seq - cursorSeq - 1} event(s) were never replayed; the server must answer 409 when Last-Event-ID is not in its log, see ${RUNBOOK_FORK}`;
            this.addDraft(d);
          }
          if (cursorEv !== undefined) cite(d, cursorEv, `client's cursor ${L} had seq ${cursorSeq}`);
          cite(d, R, `client resumed from ${L}, answered ${R.status}`);
          cite(d, first, `first event after the resume has seq ${first.seq}`);
        }
      }
    }
  }

  // ---- server-side replay_gap: a 2xx resume whose cursor is not in the serving log ----
  private serverReplayGap(): void {
    const s = this.s;
    for (const r of this.sRes) {
      if (!is2xx(r.status)) continue;
      const cb = this.createdByOf(r.inc);
      if (cb !== undefined && cb !== 'initialize') continue; // minted: reported as minted_on_resume
      if (r.outcome === 'forked') continue;
      let gap = r.found === false;
      if (r.found === undefined && r.inc !== undefined && this.createdHere(r.inc) && !s.droppedEvents[`server:${r.inc}`]) {
        let any = false;
        let has = false;
        for (const e of this.server) {
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
      let d = this.draft('replay_gap', identity);
      if (d === undefined) {
        d = { kind: 'replay_gap', identity, evidence: [], summary: '' };
        if (r.inc !== undefined) d.incarnation = r.inc;
        d.resumeCursor = r.lastEventId;
        d.summary =
          `session ${this.k8()}: server answered ${r.status} to a resume from ${r.lastEventId}, which is not in incarnation ${r.inc ?? '?'}'s event log: ` +
          `events were skipped or replayed from the start; the server must answer 409 in that case, see ${RUNBOOK_FORK}`;
        this.addDraft(d);
      }
      cite(d, r, `server answered ${r.status} though ${r.lastEventId} is not in its log`);
    }
  }

  // ---- dedup_loss: the client dropped, as a duplicate, an event that was new ----
  private dedupLoss(): void {
    const { client, s } = this;
    let clientById: Map<string, EventFact[]> | undefined;
    let lostByDraft: Map<FindingDraft, EventFact[]> | undefined;
    for (const D of client) {
      if (D.delivery !== 'dropped' || !hasPayload(D)) continue;
      if (clientById === undefined) {
        clientById = new Map();
        for (const e of client) {
          const l = clientById.get(e.eventId);
          if (l === undefined) clientById.set(e.eventId, [e]);
          else l.push(e);
        }
      }
      const earlier = (clientById.get(D.eventId) ?? []).filter((e) => e !== D && e.timeMs <= D.timeMs);
      let proof: EventFact | undefined = earlier.find(
        (E) => (E.inc !== undefined && D.inc !== undefined && E.inc !== D.inc) || (E.digest !== undefined && D.digest !== undefined && E.digest !== D.digest),
      );
      let serverProof: EventFact | undefined;
      if (proof === undefined) {
        const sv = this.serverById().get(D.eventId) ?? [];
        const incs = new Set(sv.map((e) => e.inc).filter((x) => x !== undefined));
        const dInc = this.serverIncOf(D);
        const eInc = this.serverIncOf(earlier[0]);
        if (incs.size >= 2 && (dInc === undefined || eInc === undefined || dInc !== eInc)) {
          serverProof = sv.find((e) => e.inc === dInc) ?? sv[sv.length - 1];
          proof = earlier[0];
        }
        if (serverProof === undefined) continue;
      }
      const R = this.lastClientResumeAt(D.timeMs);
      const identity = R !== undefined ? `resume:${R.lastEventId}` : `inc:${D.inc ?? this.serverIncOf(D) ?? D.eventId}`;
      let d = this.draft('dedup_loss', identity);
      if (d === undefined) {
        const oldInc = this.serverIncOf(proof);
        const newInc = this.serverIncOf(D);
        d = { kind: 'dedup_loss', identity, evidence: [], summary: '' };
        if (oldInc !== undefined) d.incarnation = oldInc;
        if (newInc !== undefined && newInc !== oldInc) d.newIncarnation = newInc;
        if (R !== undefined) {
          d.resumeCursor = R.lastEventId;
          d.clientAnchorMs = R.timeMs;
        } else {
          d.clientAnchorMs = D.timeMs;
        }
        this.addDraft(d);
      }
      if (d.requestId === undefined && (D.jsonrpcKind === 'response' || D.jsonrpcKind === 'error') && D.jsonrpcId !== undefined) d.requestId = D.jsonrpcId;
      if (proof !== undefined) cite(d, proof, `client had received ${proof.eventId} before${proof.digest !== undefined ? ` (payload ${proof.digest})` : ''}`);
      if (serverProof !== undefined) cite(d, serverProof, `server sent ${serverProof.eventId} again from incarnation ${serverProof.inc ?? '?'}`);
      cite(d, D, `client dropped ${D.eventId} as a duplicate: it carried ${describeEvent(D, s.requests)}`);
      lostByDraft ??= new Map();
      const l = lostByDraft.get(d);
      if (l === undefined) lostByDraft.set(d, [D]);
      else l.push(D);
    }
    if (lostByDraft === undefined) return;
    for (const [d, lost] of lostByDraft) {
      // Results and errors first: a lost tool result is what the paged engineer must act on.
      const rank = (e: EventFact): number => (e.jsonrpcKind === 'response' || e.jsonrpcKind === 'error' ? 0 : e.jsonrpcKind === 'request' ? 1 : 2);
      const sorted = [...lost].sort((x, y) => rank(x) - rank(y));
      const main = sorted.filter((e) => rank(e) === 0).map((e) => describeEvent(e, s.requests));
      const others = new Map<string, number>();
      for (const e of sorted) if (rank(e) !== 0) others.set(e.method ?? e.jsonrpcKind ?? 'event', (others.get(e.method ?? e.jsonrpcKind ?? 'event') ?? 0) + 1);
      const otherText = [...others].map(([m, n]) => `${n} ${m}`).join(', ');
      const what =
        main.length > 0
          ? `${main.slice(0, 3).join(', ')}${main.length > 3 ? ` and ${main.length - 3} more result(s)` : ''}${otherText !== '' ? ` (plus ${otherText})` : ''}`
          : otherText;
      d.summary =
        `session ${this.k8()}: ${what} ${main.length + others.size > 1 || lost.length > 1 ? 'were' : 'was'} dropped as duplicate(s) by the client's dedup` +
        `${d.resumeCursor !== undefined ? ` after the resume from ${d.resumeCursor}` : ''}: a new incarnation reused the event ids; ` +
        `key client dedup by (session, incarnation, event) and re-issue the lost request(s), see ${RUNBOOK_FORK}`;
    }
  }

  // ---- orphaned progress tokens ----
  private orphans(): void {
    let forks: FindingDraft[] | undefined;
    for (const r of this.tokenReqs) {
      const settled = r.settled;
      // Whether the settle came before or after the decision must not change the answer: a request
      // orphaned while pending that then failed without an answer is reported, already resolved.
      if (settled !== undefined && (settled.outcome === undefined || !ORPHAN_SETTLE_OUTCOMES.has(settled.outcome))) continue;
      // The forks found above, before any orphan is added.
      forks ??= [...this.drafts.values()];
      const o = orphanReasons(r, this.s, forks, this.cRes, this.client, this.server);
      if (o.length === 0) continue;
      const token = r.progressToken!;
      const reqInc = r.received?.inc ?? r.inc;
      const what = `${r.method ?? 'request'}${r.tool !== undefined ? ` (${r.tool})` : ''} request ${r.requestId}`;
      const identity = `req:${r.requestId}:${token}`;
      let d = this.draft('orphaned_progress_token', identity);
      if (d === undefined) {
        d = { kind: 'orphaned_progress_token', identity, evidence: [], summary: '', requestId: r.requestId, progressToken: token };
        if (reqInc !== undefined) d.incarnation = reqInc;
        d.summary =
          `session ${this.k8()}: ${what} with progressToken ${token} will never be answered: ${o[0]!.why}; ` +
          `the client waits until its timeout: fail it and re-initialize, see ${RUNBOOK_ORPHAN}`;
        this.addDraft(d);
      }
      const first = r.sent ?? r.received;
      if (first !== undefined) cite(d, first, `${first.side} ${first.side === 'client' ? 'sent' : 'received'} ${what} with progressToken ${token}`);
      for (const x of o) if (x.fact !== undefined) cite(d, x.fact, x.why);
      if (settled !== undefined) {
        d.resolvedAtMs = settled.ingestMs;
        cite(d, settled, settledShows(r.requestId, settled.outcome));
      }
    }
  }

  // ---- resumes: count each once, client and server spans of one resume together ----
  private countResumes(stateless: boolean): ResumeDecision[] {
    const { cRes, sRes } = this;
    const forkCursors = new Set<string>();
    const forkIncs = new Set<string>();
    for (const f of this.drafts.values()) {
      if (f.kind === 'orphaned_progress_token') continue;
      if (f.resumeCursor !== undefined) forkCursors.add(f.resumeCursor);
      if (f.newIncarnation !== undefined) forkIncs.add(f.newIncarnation);
    }
    const resumes: ResumeDecision[] = [];
    const cursors = new Set<string>();
    for (const r of cRes) cursors.add(r.lastEventId);
    for (const r of sRes) cursors.add(r.lastEventId);
    for (const L of cursors) {
      // The i-th client and i-th server resume from one cursor are one resume.
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
          for (const x of facts) x.counted = true;
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
    return resumes;
  }
}

function cite(d: FindingDraft, fact: SpanFact, shows: string): void {
  if (d.evidence.length >= MAX_EVIDENCE) return;
  for (const e of d.evidence) if (e.fact.spanId === fact.spanId && e.fact.traceId === fact.traceId) return;
  d.evidence.push({ fact, shows });
}

function orphanReasons(
  r: RequestFact,
  s: SessionState,
  forks: FindingDraft[],
  cRes: ResumeFact[],
  client: EventFact[],
  server: EventFact[],
): Array<{ why: string; fact?: SpanFact }> {
  const out: Array<{ why: string; fact?: SpanFact }> = [];
  const reqInc = r.received?.inc ?? r.inc;
  // Client-clock end of the pending time: what the client met after giving up did not orphan it.
  const until = r.settled?.side === 'client' ? r.settled.timeMs : Infinity;
  if (r.sent !== undefined) {
    const sentAt = r.sent.timeMs;
    for (const f of forks) {
      const after =
        f.clientAnchorMs !== undefined
          ? f.clientAnchorMs >= sentAt && f.clientAnchorMs <= until
          : !(reqInc !== undefined && f.newIncarnation === reqInc); // sent to the fork itself: not orphaned by it
      if (after) {
        const ev = f.evidence[0];
        out.push({ why: `the session forked after it was sent (${f.kind})`, ...(ev !== undefined ? { fact: ev.fact } : {}) });
        break;
      }
    }
    const rej = cRes.find((x) => (x.status === 404 || x.status === 410) && x.timeMs >= sentAt && x.timeMs <= until);
    if (rej !== undefined) out.push({ why: `a resume was rejected with ${rej.status} while it was pending`, fact: rej });
  }
  if (reqInc !== undefined) {
    // Only a request the server received can be pending in the incarnation that ended: one sent
    // to an already ended incarnation is refused at once (404), it does not hang.
    const ended = r.received !== undefined ? s.ended.find((e) => e.inc === reqInc) : undefined;
    const answered =
      ended !== undefined &&
      server.some((e) => e.inc === reqInc && (e.jsonrpcKind === 'response' || e.jsonrpcKind === 'error') && e.jsonrpcId === r.requestId);
    if (ended !== undefined && !answered) out.push({ why: `the server ended incarnation ${reqInc} (${ended.reason}) before answering`, fact: ended });
    const elsewhere = server.find(
      (e) => e.inc !== undefined && e.inc !== reqInc && (e.jsonrpcKind === 'response' || e.jsonrpcKind === 'error') && e.jsonrpcId === r.requestId,
    );
    if (elsewhere !== undefined) out.push({ why: `its response was sent by another incarnation (${elsewhere.inc})`, fact: elsewhere });
  }
  if (out.length === 0 && r.sent !== undefined && r.received !== undefined && r.settled !== undefined) {
    // Resumed (2xx) while pending, the server's side then sent events of the session but never
    // the answer, and the client gave up: the stream the answer belonged to was lost (an event
    // store that replays but loses the stream a call answers on, as server-everything's does).
    const sentAt = r.sent.timeMs;
    const res = cRes.find((x) => x.status !== undefined && x.status >= 200 && x.status < 300 && x.timeMs >= sentAt && x.timeMs <= until);
    if (res !== undefined) {
      const answered = server.some((e) => (e.jsonrpcKind === 'response' || e.jsonrpcKind === 'error') && e.jsonrpcId === r.requestId);
      const after = server.find((e) => e.timeMs >= res.timeMs);
      if (!answered && after !== undefined) out.push({ why: `the session resumed from ${res.lastEventId} but the server never sent its answer on any stream`, fact: res });
    }
  }
  if (r.sent !== undefined) {
    const dropped = client.find(
      (e) =>
        e.delivery === 'dropped' && (e.jsonrpcKind === 'response' || e.jsonrpcKind === 'error') && e.jsonrpcId === r.requestId && e.timeMs <= until,
    );
    if (dropped !== undefined) out.push({ why: `its response (${dropped.eventId}) was dropped by the client as a duplicate`, fact: dropped });
  }
  return out;
}

/** Evidence text of the settle that resolved an orphan (the live resolution path cites the same words). */
export function settledShows(requestId: string, outcome: string | undefined): string {
  if (outcome === 'answered' || outcome === 'error') return `client finally received the answer to request ${requestId} (${outcome})`;
  return `client settled request ${requestId} without an answer (${outcome ?? 'unknown'})`;
}

/** "the tools/call (long_job) result for request 3", "a notifications/progress notification", … */
export function describeEvent(e: EventFact, requests: Map<string, RequestFact>): string {
  if ((e.jsonrpcKind === 'response' || e.jsonrpcKind === 'error') && e.jsonrpcId !== undefined) {
    const r = requests.get(e.jsonrpcId);
    const m = r?.method !== undefined ? `${r.method}${r.tool !== undefined ? ` (${r.tool})` : ''} ` : '';
    return `the ${m}${e.jsonrpcKind === 'error' ? 'error' : 'result'} for request ${e.jsonrpcId}`;
  }
  if (e.jsonrpcKind === 'notification') {
    return `a ${e.method ?? 'notification'}${e.progressToken !== undefined ? ` for progressToken ${e.progressToken}` : ''}`;
  }
  if (e.jsonrpcKind === 'request') return `a server request ${e.method ?? ''}`.trimEnd();
  return `event ${e.eventId}`;
}
