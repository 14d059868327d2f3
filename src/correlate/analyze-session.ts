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
const MAX_EVIDENCE = 16;

const byTime = (a: SpanFact, b: SpanFact): number => a.timeMs - b.timeMs;
const seqUsable = (e: EventFact): e is EventFact & { seq: number } =>
  e.seq !== undefined && (e.seqSource === 'server' || e.seqSource === 'counter');
const is2xx = (st: number | undefined): boolean => st !== undefined && st >= 200 && st < 300;
const hasPayload = (e: EventFact): boolean => e.jsonrpcKind !== 'none' && e.delivery !== 'no_payload';

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
  const k8 = `${s.key.slice(0, 8)}…`;
  const client: EventFact[] = [];
  const server: EventFact[] = [];
  for (const e of s.events) (e.side === 'client' ? client : server).push(e);
  client.sort(byTime);
  server.sort(byTime);
  const cRes = s.resumes.filter((r) => r.side === 'client').sort(byTime);
  const sRes = s.resumes.filter((r) => r.side === 'server').sort(byTime);
  const requests = [...s.requests.values()];
  const clientInits = requests
    .filter((r) => r.method === 'initialize' && r.sent !== undefined)
    .map((r) => r.sent!.timeMs)
    .sort((a, b) => a - b);

  const createdByOf = (inc: string | undefined): string | undefined =>
    inc === undefined ? undefined : (s.created.find((c) => c.inc === inc)?.createdBy ?? s.knownIncarnations[inc]);

  const serverById = new Map<string, EventFact[]>();
  for (const e of server) {
    const l = serverById.get(e.eventId);
    if (l === undefined) serverById.set(e.eventId, [e]);
    else l.push(e);
  }
  // A naive server sends no incarnation: map a client event to the server's (observed) one by id and payload.
  const serverIncOf = (e: EventFact | undefined): string | undefined => {
    if (e === undefined) return undefined;
    if (e.inc !== undefined) return e.inc;
    const incs = new Set<string>();
    for (const o of serverById.get(e.eventId) ?? []) {
      if (o.inc !== undefined && (e.digest === undefined || o.digest === undefined || o.digest === e.digest)) incs.add(o.inc);
    }
    return incs.size === 1 ? [...incs][0] : undefined;
  };

  const anyServerInc =
    server.some((e) => e.inc !== undefined) ||
    sRes.some((r) => r.inc !== undefined) ||
    requests.some((r) => r.received?.inc !== undefined);
  const hasServerSpans = server.length > 0 || sRes.length > 0 || s.ended.length > 0 || requests.some((r) => r.received);
  const stateless =
    s.stateless ||
    (hasServerSpans && s.created.length === 0 && Object.keys(s.knownIncarnations).length === 0 && !anyServerInc);

  const drafts = new Map<string, FindingDraft>();
  const draft = (kind: FindingKind, identity: string, init: () => Omit<FindingDraft, 'kind' | 'identity' | 'evidence'>): FindingDraft => {
    const id = `${kind}\u0000${identity}`;
    let d = drafts.get(id);
    if (d === undefined) {
      d = { kind, identity, evidence: [], ...init() };
      drafts.set(id, d);
    }
    return d;
  };
  const cite = (d: FindingDraft, fact: SpanFact, shows: string): void => {
    if (d.evidence.length >= MAX_EVIDENCE) return;
    if (d.evidence.some((e) => e.fact.spanId === fact.spanId && e.fact.traceId === fact.traceId)) return;
    d.evidence.push({ fact, shows });
  };
  const lastClientResumeAt = (t: number): ResumeFact | undefined => {
    let found: ResumeFact | undefined;
    for (const r of cRes) if (r.timeMs <= t) found = r;
    return found;
  };

  if (!stateless) {
    // ---- minted_on_resume: the server allocated state on something other than initialize ----
    const createdSorted = [...s.created].sort(byTime);
    for (const c of createdSorted) {
      if (c.createdBy === 'initialize') continue;
      const prev = [...createdSorted].reverse().find((p) => p.timeMs < c.timeMs && p.inc !== c.inc);
      const cursor = c.lastEventId;
      const d = draft('minted_on_resume', `inc:${c.inc}`, () => ({
        ...(prev !== undefined ? { incarnation: prev.inc } : {}),
        newIncarnation: c.inc,
        ...(cursor !== undefined ? { resumeCursor: cursor } : {}),
        summary:
          `session ${k8}: server minted a new incarnation ${c.inc} on a ${c.createdBy} request` +
          `${cursor !== undefined ? ` resuming from Last-Event-ID ${cursor}` : ''}` +
          `${c.clientSuppliedId === true ? ' under the client\'s old session id' : ''} instead of answering 404; ` +
          `the client's event log and pending requests are gone: make the server answer 404 on unknown sessions, see ${RUNBOOK_FORK}`,
      }));
      cite(d, c, `server created incarnation ${c.inc} on ${c.createdBy}${cursor !== undefined ? ` (Last-Event-ID ${cursor})` : ''}`);
      const ended = s.ended.find((e) => prev !== undefined && e.inc === prev.inc);
      if (ended !== undefined) cite(d, ended, `server ended incarnation ${ended.inc} (${ended.reason})`);
      for (const r of sRes) {
        if (r.inc === c.inc || (cursor !== undefined && r.lastEventId === cursor)) {
          cite(d, r, `server answered resume from ${r.lastEventId} with ${r.status ?? '?'} on incarnation ${r.inc ?? '?'}`);
        }
      }
      for (const r of cRes) if (cursor !== undefined && r.lastEventId === cursor) cite(d, r, `client resumed from ${cursor}, answered ${r.status ?? '?'}`);
    }
    for (const r of sRes) {
      if (r.outcome !== 'forked') continue;
      const identity = r.inc !== undefined ? `inc:${r.inc}` : `resume:${r.lastEventId}`;
      const d = draft('minted_on_resume', identity, () => ({
        ...(r.inc !== undefined ? { newIncarnation: r.inc } : {}),
        resumeCursor: r.lastEventId,
        summary:
          `session ${k8}: server answered a resume from Last-Event-ID ${r.lastEventId} with a new incarnation instead of 404; ` +
          `make the server answer 404 on unknown sessions, see ${RUNBOOK_FORK}`,
      }));
      cite(d, r, `server classified its resume from ${r.lastEventId} as forked`);
    }

    // ---- incarnation_changed: the client's incarnation changed without an initialize ----
    type Item = { t: number; fact: SpanFact; inc?: string; resume?: ResumeFact; init?: boolean };
    const items: Item[] = [];
    for (const e of client) items.push({ t: e.timeMs, fact: e, ...(e.inc !== undefined ? { inc: e.inc } : {}) });
    for (const r of cRes) items.push({ t: r.timeMs, fact: r, resume: r });
    for (const r of requests) {
      if (r.sent === undefined) continue;
      items.push({ t: r.sent.timeMs, fact: r.sent, ...(r.sentInc !== undefined ? { inc: r.sentInc } : {}), init: r.method === 'initialize' });
    }
    items.sort((a, b) => a.t - b.t);
    let held = s.clientBaseline?.inc;
    const change = (newInc: string, item: Item): void => {
      if (createdByOf(newInc) === 'initialize' && item.resume === undefined) {
        // A new life created by initialize (an id reused across reaper cycles), not reached by a resume: not a fork.
        return;
      }
      const r = item.resume ?? lastClientResumeAt(item.t);
      const before = held;
      const d = draft('incarnation_changed', `inc:${newInc}`, () => ({
        ...(before !== undefined ? { incarnation: before } : {}),
        newIncarnation: newInc,
        ...(r !== undefined ? { resumeCursor: r.lastEventId, clientAnchorMs: r.timeMs } : { clientAnchorMs: item.t }),
        summary:
          `session ${k8}: client moved from incarnation ${before ?? '?'} to ${newInc}` +
          `${r !== undefined ? ` on a resume from ${r.lastEventId}` : ''} without initialize: the server replaced the session under the client; ` +
          `fail pending requests and re-initialize, see ${RUNBOOK_FORK}`,
      }));
      if (r !== undefined && r !== item.resume) cite(d, r, `client resumed from ${r.lastEventId}, answered ${r.status ?? '?'}`);
      cite(d, item.fact, `client saw incarnation ${newInc} while holding ${before ?? '?'}`);
    };
    for (const it of items) {
      if (it.init === true) {
        held = undefined;
        continue;
      }
      const r = it.resume;
      if (r !== undefined) {
        if (r.previousInc !== undefined && held === undefined) held = r.previousInc;
        const ak = r.answeredKey;
        if (ak !== undefined) {
          const d = draft('incarnation_changed', `key:${ak}`, () => ({
            ...(held !== undefined ? { incarnation: held } : {}),
            resumeCursor: r.lastEventId,
            clientAnchorMs: r.timeMs,
            summary:
              `session ${k8}: a resume from ${r.lastEventId} was answered with another session id (key ${ak.slice(0, 8)}…): ` +
              `the server replaced the session under the client; fail pending requests and re-initialize, see ${RUNBOOK_FORK}`,
          }));
          cite(d, r, `client resume answered with session key ${ak.slice(0, 8)}…`);
        }
        if (is2xx(r.status) && r.inc !== undefined) {
          if (held !== undefined && r.inc !== held) change(r.inc, it);
          held = r.inc;
        }
        continue;
      }
      if (it.inc === undefined) continue;
      if (held !== undefined && it.inc !== held) change(it.inc, it);
      held = it.inc;
    }

    // ---- per client resume: sequence_regression and client-side replay_gap ----
    for (let i = 0; i < cRes.length; i++) {
      const R = cRes[i]!;
      const L = R.lastEventId;
      const lastInit = [...clientInits].reverse().find((t) => t <= R.timeMs) ?? -Infinity;
      const nextInit = clientInits.find((t) => t > R.timeMs) ?? Infinity;
      const nextRes = cRes.slice(i + 1).find((x) => x.timeMs > R.timeMs)?.timeMs ?? Infinity;
      const endT = Math.min(nextInit, nextRes);
      const before = client.filter((e) => e.timeMs < R.timeMs && e.timeMs >= lastInit);
      const after = client.filter((e) => e.timeMs >= R.timeMs && e.timeMs < endT);
      let maxBefore: number | undefined;
      let maxEv: EventFact | undefined;
      for (const e of before) {
        if (seqUsable(e) && (maxBefore === undefined || e.seq > maxBefore)) {
          maxBefore = e.seq;
          maxEv = e;
        }
      }
      const base = s.clientBaseline;
      if (base?.maxSeq !== undefined && base.timeMs < R.timeMs && base.timeMs >= lastInit) {
        maxBefore = Math.max(maxBefore ?? base.maxSeq, base.maxSeq);
      }
      const cursorEv = [...before].reverse().find((e) => e.eventId === L);
      let cursorSeq: number | undefined = cursorEv !== undefined && seqUsable(cursorEv) ? cursorEv.seq : undefined;
      if (cursorSeq === undefined && base?.lastEventId === L) cursorSeq = base.maxSeq;

      if (maxBefore !== undefined) {
        // A true replay only yields events after the cursor: an event at or before it, below
        // the highest seen, cannot come from the same log.
        const regressed = after.filter((e) => seqUsable(e) && e.seq < maxBefore! && (cursorSeq === undefined || e.seq <= cursorSeq));
        if (regressed.length > 0) {
          const first = regressed[0]!;
          const top = maxBefore;
          const oldInc = R.previousInc ?? serverIncOf(maxEv);
          const newInc = serverIncOf(first);
          const d = draft('sequence_regression', `resume:${L}`, () => ({
            ...(oldInc !== undefined ? { incarnation: oldInc } : {}),
            ...(newInc !== undefined && newInc !== oldInc ? { newIncarnation: newInc } : {}),
            resumeCursor: L,
            clientAnchorMs: R.timeMs,
            summary:
              `session ${k8}: after resuming from ${L} the client received event seq ${first.seq} below the ${top} it had already seen: ` +
              `the server restarted the session's event log (a fork); see ${RUNBOOK_FORK}`,
          }));
          if (maxEv !== undefined) cite(d, maxEv, `client had received seq ${maxEv.seq} (${maxEv.eventId}) before the resume`);
          cite(d, R, `client resumed from ${L}, answered ${R.status ?? '?'}`);
          for (const e of regressed.slice(0, 4)) cite(d, e, `client received ${e.eventId} with seq ${e.seq} after the resume`);
        }
      }

      if (is2xx(R.status) && cursorSeq !== undefined) {
        const first = after.find(seqUsable);
        if (first !== undefined && first.seq > cursorSeq + 1) {
          const heldInc = R.previousInc ?? cursorEv?.inc ?? base?.inc;
          const a = serverIncOf(first);
          const b = heldInc ?? serverIncOf(cursorEv);
          if (a === undefined || b === undefined || a === b) {
            const d = draft('replay_gap', `resume:${L}`, () => ({
              ...(heldInc !== undefined ? { incarnation: heldInc } : {}),
              resumeCursor: L,
              clientAnchorMs: R.timeMs,
              summary:
                `session ${k8}: the resume from ${L} (seq ${cursorSeq}) continued at seq ${first.seq}: ` +
                `${first.seq - cursorSeq! - 1} event(s) were never replayed; the server must answer 409 when Last-Event-ID is not in its log, see ${RUNBOOK_FORK}`,
            }));
            if (cursorEv !== undefined) cite(d, cursorEv, `client's cursor ${L} had seq ${cursorSeq}`);
            cite(d, R, `client resumed from ${L}, answered ${R.status}`);
            cite(d, first, `first event after the resume has seq ${first.seq}`);
          }
        }
      }
    }

    // ---- server-side replay_gap: a 2xx resume whose cursor is not in the serving log ----
    for (const r of sRes) {
      if (!is2xx(r.status)) continue;
      const cb = createdByOf(r.inc);
      if (cb !== undefined && cb !== 'initialize') continue; // minted: reported as minted_on_resume
      if (r.outcome === 'forked') continue;
      let gap = r.found === false;
      if (r.found === undefined && r.inc !== undefined && s.created.some((c) => c.inc === r.inc) && !s.droppedEvents[`server:${r.inc}`]) {
        const incEvents = server.filter((e) => e.inc === r.inc);
        gap = incEvents.length > 0 && !incEvents.some((e) => e.eventId === r.lastEventId);
      }
      if (!gap) continue;
      const d = draft('replay_gap', `resume:${r.lastEventId}`, () => ({
        ...(r.inc !== undefined ? { incarnation: r.inc } : {}),
        resumeCursor: r.lastEventId,
        summary:
          `session ${k8}: server answered ${r.status} to a resume from ${r.lastEventId}, which is not in incarnation ${r.inc ?? '?'}'s event log: ` +
          `events were skipped or replayed from the start; the server must answer 409 in that case, see ${RUNBOOK_FORK}`,
      }));
      cite(d, r, `server answered ${r.status} though ${r.lastEventId} is not in its log`);
    }

    // ---- dedup_loss: the client dropped, as a duplicate, an event that was new ----
    const clientById = new Map<string, EventFact[]>();
    for (const e of client) {
      const l = clientById.get(e.eventId);
      if (l === undefined) clientById.set(e.eventId, [e]);
      else l.push(e);
    }
    const lostByDraft = new Map<FindingDraft, EventFact[]>();
    for (const D of client) {
      if (D.delivery !== 'dropped' || !hasPayload(D)) continue;
      const earlier = (clientById.get(D.eventId) ?? []).filter((e) => e !== D && e.timeMs <= D.timeMs);
      let proof: EventFact | undefined = earlier.find(
        (E) => (E.inc !== undefined && D.inc !== undefined && E.inc !== D.inc) || (E.digest !== undefined && D.digest !== undefined && E.digest !== D.digest),
      );
      let serverProof: EventFact | undefined;
      if (proof === undefined) {
        const sv = serverById.get(D.eventId) ?? [];
        const incs = new Set(sv.map((e) => e.inc).filter((x) => x !== undefined));
        const dInc = serverIncOf(D);
        const eInc = serverIncOf(earlier[0]);
        if (incs.size >= 2 && (dInc === undefined || eInc === undefined || dInc !== eInc)) {
          serverProof = sv.find((e) => e.inc === dInc) ?? sv[sv.length - 1];
          proof = earlier[0];
        }
        if (serverProof === undefined) continue;
      }
      const R = lastClientResumeAt(D.timeMs);
      const identity = R !== undefined ? `resume:${R.lastEventId}` : `inc:${D.inc ?? serverIncOf(D) ?? D.eventId}`;
      const oldInc = serverIncOf(proof);
      const newInc = serverIncOf(D);
      const d = draft('dedup_loss', identity, () => ({
        ...(oldInc !== undefined ? { incarnation: oldInc } : {}),
        ...(newInc !== undefined && newInc !== oldInc ? { newIncarnation: newInc } : {}),
        ...(R !== undefined ? { resumeCursor: R.lastEventId, clientAnchorMs: R.timeMs } : { clientAnchorMs: D.timeMs }),
        summary: '',
      }));
      if (d.requestId === undefined && (D.jsonrpcKind === 'response' || D.jsonrpcKind === 'error') && D.jsonrpcId !== undefined) d.requestId = D.jsonrpcId;
      if (proof !== undefined) cite(d, proof, `client had received ${proof.eventId} before${proof.digest !== undefined ? ` (payload ${proof.digest})` : ''}`);
      if (serverProof !== undefined) cite(d, serverProof, `server sent ${serverProof.eventId} again from incarnation ${serverProof.inc ?? '?'}`);
      cite(d, D, `client dropped ${D.eventId} as a duplicate: it carried ${describeEvent(D, s.requests)}`);
      const l = lostByDraft.get(d);
      if (l === undefined) lostByDraft.set(d, [D]);
      else l.push(D);
    }
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
        `session ${k8}: ${what} ${main.length + others.size > 1 || lost.length > 1 ? 'were' : 'was'} dropped as duplicate(s) by the client's dedup` +
        `${d.resumeCursor !== undefined ? ` after the resume from ${d.resumeCursor}` : ''}: a new incarnation reused the event ids; ` +
        `key client dedup by (session, incarnation, event) and re-issue the lost request(s), see ${RUNBOOK_FORK}`;
    }

    for (const g of s.guardForks) {
      const kind = g.forkKind === 'session_id_changed' ? 'incarnation_changed' : g.forkKind;
      for (const d of drafts.values()) if (d.kind === kind) cite(d, g, `client guard raised SessionForkError ${g.forkKind}`);
    }
  }

  const forks = [...drafts.values()];

  // ---- orphaned progress tokens ----
  for (const r of requests) {
    if (r.progressToken === undefined || r.settled !== undefined) continue;
    const o = orphanReasons(r, s, forks, cRes, client, server);
    if (o.length === 0) continue;
    const reqInc = r.received?.inc ?? r.inc;
    const what = `${r.method ?? 'request'}${r.tool !== undefined ? ` (${r.tool})` : ''} request ${r.requestId}`;
    const d = draft('orphaned_progress_token', `req:${r.requestId}:${r.progressToken}`, () => ({
      requestId: r.requestId,
      progressToken: r.progressToken!,
      ...(reqInc !== undefined ? { incarnation: reqInc } : {}),
      summary:
        `session ${k8}: ${what} with progressToken ${r.progressToken} will never be answered: ${o[0]!.why}; ` +
        `the client waits until its timeout: fail it and re-initialize, see ${RUNBOOK_ORPHAN}`,
    }));
    const first = r.sent ?? r.received;
    if (first !== undefined) cite(d, first, `${first.side} ${first.side === 'client' ? 'sent' : 'received'} ${what} with progressToken ${r.progressToken}`);
    for (const x of o) if (x.fact !== undefined) cite(d, x.fact, x.why);
  }

  // ---- resumes: count each once, client and server spans of one resume together ----
  const forkCursors = new Set<string>();
  const forkIncs = new Set<string>();
  for (const f of forks) {
    if (f.resumeCursor !== undefined) forkCursors.add(f.resumeCursor);
    if (f.newIncarnation !== undefined) forkIncs.add(f.newIncarnation);
  }
  const resumes: ResumeDecision[] = [];
  const cursors = new Set<string>([...cRes, ...sRes].map((r) => r.lastEventId));
  for (const L of cursors) {
    const cs = cRes.filter((r) => r.lastEventId === L);
    const ss = sRes.filter((r) => r.lastEventId === L);
    for (let i = 0; i < Math.max(cs.length, ss.length); i++) {
      const c = cs[i];
      const sv = ss[i];
      const facts = [sv, c].filter((x): x is ResumeFact => x !== undefined);
      if (facts.some((x) => x.counted === true)) {
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

  return { findings: [...drafts.values()], resumes };
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
  if (r.sent !== undefined) {
    const sentAt = r.sent.timeMs;
    for (const f of forks) {
      const after =
        f.clientAnchorMs !== undefined
          ? f.clientAnchorMs >= sentAt
          : !(reqInc !== undefined && f.newIncarnation === reqInc); // sent to the fork itself: not orphaned by it
      if (after) {
        const ev = f.evidence[0];
        out.push({ why: `the session forked after it was sent (${f.kind})`, ...(ev !== undefined ? { fact: ev.fact } : {}) });
        break;
      }
    }
    const rej = cRes.find((x) => (x.status === 404 || x.status === 410) && x.timeMs >= sentAt);
    if (rej !== undefined) out.push({ why: `a resume was rejected with ${rej.status} while it was pending`, fact: rej });
  }
  if (reqInc !== undefined) {
    const ended = s.ended.find((e) => e.inc === reqInc);
    const answered = server.some(
      (e) => e.inc === reqInc && (e.jsonrpcKind === 'response' || e.jsonrpcKind === 'error') && e.jsonrpcId === r.requestId,
    );
    if (ended !== undefined && !answered) out.push({ why: `the server ended incarnation ${reqInc} (${ended.reason}) before answering`, fact: ended });
    const elsewhere = server.find(
      (e) => e.inc !== undefined && e.inc !== reqInc && (e.jsonrpcKind === 'response' || e.jsonrpcKind === 'error') && e.jsonrpcId === r.requestId,
    );
    if (elsewhere !== undefined) out.push({ why: `its response was sent by another incarnation (${elsewhere.inc})`, fact: elsewhere });
  }
  if (r.sent !== undefined) {
    const dropped = client.find(
      (e) => e.delivery === 'dropped' && (e.jsonrpcKind === 'response' || e.jsonrpcKind === 'error') && e.jsonrpcId === r.requestId,
    );
    if (dropped !== undefined) out.push({ why: `its response (${dropped.eventId}) was dropped by the client as a duplicate`, fact: dropped });
  }
  return out;
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
