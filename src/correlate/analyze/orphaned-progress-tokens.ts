import type { RequestFact, SpanFact } from '../session-state.js';
import { cite } from './cite.js';
import { clientEndedOrSawFail } from './client-settle.js';
import { settledShows } from './describe-event.js';
import { is2xx } from './outcome-of-status.js';
import { RUNBOOK_ORPHAN } from './runbook.js';
import type { SessionView } from './session-view.js';
import type { FindingDraft } from './types.js';

/**
 * `forkwatch.request.outcome` values of a settle that leaves the request an orphan when it was
 * orphaned while pending (it settled before the decision or after): the client's own `timeout`
 * (it waited to its timeout: the hang itself), and the sidecar proxy's `cancelled` (server side,
 * `stream_closed`: the cancel it saw on the wire, which a client also sends on a timeout). A
 * client's own `cancelled`, `transport_error`, `error`, `failed_*` or `answered` is never an orphan:
 * its app ended the call or saw it fail ({@link clientEndedOrSawFail}), e.g. a retry POST rejected
 * `400` within milliseconds.
 */
const ORPHAN_SETTLE_OUTCOMES: ReadonlySet<string> = new Set(['timeout', 'cancelled']);

/** Resume statuses on which the client guard fails every pending request at once (client-guard.ts). */
const GUARD_FAILS_ON: ReadonlySet<number> = new Set([404, 409, 410]);

/** orphaned_progress_token: a request with a progress token that will never be answered. */
export function orphanedProgressTokens(v: SessionView): void {
  let forks: FindingDraft[] | undefined;
  for (const r of v.tokenReqs) {
    const settled = r.settled;
    // Whether the settle came before or after the decision must not change the answer: a request
    // orphaned while pending that then failed without an answer is reported, already resolved.
    if (settled !== undefined && (settled.outcome === undefined || !ORPHAN_SETTLE_OUTCOMES.has(settled.outcome) || clientEndedOrSawFail(settled))) continue;
    // The forks found before, not the orphans added here.
    forks ??= [...v.drafts.values()];
    const o = orphanReasons(v, r, forks);
    if (o.length === 0) continue;
    const token = r.progressToken!;
    const reqInc = r.received?.inc ?? r.inc;
    const what = `${r.method ?? 'request'}${r.tool !== undefined ? ` (${r.tool})` : ''} request ${r.requestId}`;
    const identity = `req:${r.requestId}:${token}`;
    let d = v.draft('orphaned_progress_token', identity);
    if (d === undefined) {
      d = { kind: 'orphaned_progress_token', identity, evidence: [], summary: '', requestId: r.requestId, progressToken: token };
      if (reqInc !== undefined) d.incarnation = reqInc;
      d.summary =
        `session ${v.k8()}: ${what} with progressToken ${token} will never be answered: ${o[0]!.why}; ` +
        `the client waits until its timeout: fail it and re-initialize, see ${RUNBOOK_ORPHAN}`;
      v.addDraft(d);
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

/**
 * Why a pending request will never be answered. Each reason stands on one side's spans alone:
 * the client's resume and its status suffice when the server is not instrumented.
 */
function orphanReasons(v: SessionView, r: RequestFact, forks: FindingDraft[]): Array<{ why: string; fact?: SpanFact }> {
  const { ended: endedFacts, cRes, client, server } = v;
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
    // Any rejected resume (404/410, 409, a 400 as server-everything answers, a 500) leaves the
    // request's stream gone: its answer can no longer arrive on it. Except where a guarded client
    // fails its pending requests at once (404/409/410): there a missing settle is a lost span, not a hang.
    const rej = cRes.find(
      (x) => x.status !== undefined && !is2xx(x.status) && !(x.guarded === true && GUARD_FAILS_ON.has(x.status)) && x.timeMs >= sentAt && x.timeMs <= until,
    );
    if (rej !== undefined) out.push({ why: `a resume was rejected with ${rej.status} while it was pending`, fact: rej });
  }
  if (reqInc !== undefined) {
    // Only a request the server received can be pending in the incarnation that ended: one sent
    // to an already ended incarnation is refused at once (404), it does not hang.
    // Nor one whose client cancelled it on the wire before the end (the server's or the proxy's own
    // settle, on the same clock as the end): it no longer waited, the end did not orphan it.
    const cancelledAt = r.settled?.side === 'server' && r.settled.outcome === 'cancelled' ? r.settled.timeMs : Infinity;
    const ended = r.received !== undefined ? endedFacts.find((e) => e.inc === reqInc && e.timeMs < cancelledAt) : undefined;
    const answered =
      ended !== undefined &&
      server.some((e) => e.inc === reqInc && (e.jsonrpcKind === 'response' || e.jsonrpcKind === 'error') && e.jsonrpcId === r.requestId);
    // A guarded client learns of the end at its next request or resume (404) and fails the call at
    // once; its settle says so. Without that settle (a lost span) it is no hang to report.
    if (ended !== undefined && !answered && r.sentGuarded !== true) out.push({ why: `the server ended incarnation ${reqInc} (${ended.reason}) before answering`, fact: ended });
    const elsewhere = server.find(
      (e) => e.inc !== undefined && e.inc !== reqInc && (e.jsonrpcKind === 'response' || e.jsonrpcKind === 'error') && e.jsonrpcId === r.requestId,
    );
    if (elsewhere !== undefined) out.push({ why: `its response was sent by another incarnation (${elsewhere.inc})`, fact: elsewhere });
  }
  if (r.settled?.streamClosed === true && r.received !== undefined) {
    // The proxy saw the request's response stream end before its answer (broken; or closed by the
    // server and then cancelled on the client's timeout), no stream of the session carry the
    // answer afterwards, and the client then cancel it: the wire alone shows
    // an answer that never came, with no client or server instrumentation.
    const answered = server.some(
      (e) => (e.jsonrpcKind === 'response' || e.jsonrpcKind === 'error') && e.jsonrpcId === r.requestId && (reqInc === undefined || e.inc === undefined || e.inc === reqInc),
    );
    if (!answered) out.push({ why: `its response stream ended (broken, or closed by the server) before the answer, no stream of the session answered it, and the client gave up on it (${r.settled.outcome ?? 'cancelled'})`, fact: r.settled });
  }
  if (out.length === 0 && r.sent !== undefined && r.received !== undefined && r.settled !== undefined) {
    // Resumed (2xx) while pending, the server's side then sent events of the session but never
    // the answer, and the client gave up: the stream the answer belonged to was lost (an event
    // store that replays but loses the stream a call answers on, as server-everything's does).
    const sentAt = r.sent.timeMs;
    const res = cRes.find((x) => x.status !== undefined && is2xx(x.status) && x.timeMs >= sentAt && x.timeMs <= until);
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
