import type { EventFact } from '../session-state.js';
import { cite } from './cite.js';
import { describeEvent } from './describe-event.js';
import { RUNBOOK_FORK } from './runbook.js';
import type { SessionView } from './session-view.js';
import type { FindingDraft } from './types.js';

const hasPayload = (e: EventFact): boolean => e.jsonrpcKind !== 'none' && e.delivery !== 'no_payload';
/** Results and errors first: a lost tool result is what the paged engineer must act on. */
const rank = (e: EventFact): number => (e.jsonrpcKind === 'response' || e.jsonrpcKind === 'error' ? 0 : e.jsonrpcKind === 'request' ? 1 : 2);

/** dedup_loss: the client dropped, as a duplicate, an event that was new. */
export function dedupLoss(v: SessionView): void {
  const { client, s } = v;
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
      const sv = v.serverById().get(D.eventId) ?? [];
      const incs = new Set(sv.map((e) => e.inc).filter((x) => x !== undefined));
      const dInc = v.serverIncOf(D);
      const eInc = v.serverIncOf(earlier[0]);
      if (incs.size >= 2 && (dInc === undefined || eInc === undefined || dInc !== eInc)) {
        serverProof = sv.find((e) => e.inc === dInc) ?? sv[sv.length - 1];
        proof = earlier[0];
      }
      if (serverProof === undefined) continue;
    }
    const R = v.lastClientResumeAt(D.timeMs);
    const identity = R !== undefined ? `resume:${R.lastEventId}` : `inc:${D.inc ?? v.serverIncOf(D) ?? D.eventId}`;
    let d = v.draft('dedup_loss', identity);
    if (d === undefined) {
      const oldInc = v.serverIncOf(proof);
      const newInc = v.serverIncOf(D);
      d = { kind: 'dedup_loss', identity, evidence: [], summary: '' };
      if (oldInc !== undefined) d.incarnation = oldInc;
      if (newInc !== undefined && newInc !== oldInc) d.newIncarnation = newInc;
      if (R !== undefined) {
        d.resumeCursor = R.lastEventId;
        d.clientAnchorMs = R.timeMs;
      } else {
        d.clientAnchorMs = D.timeMs;
      }
      v.addDraft(d);
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
      `session ${v.k8()}: ${what} ${main.length + others.size > 1 || lost.length > 1 ? 'were' : 'was'} dropped as duplicate(s) by the client's dedup` +
      `${d.resumeCursor !== undefined ? ` after the resume from ${d.resumeCursor}` : ''}: a new incarnation reused the event ids; ` +
      `key client dedup by (session, incarnation, event) and re-issue the lost request(s), see ${RUNBOOK_FORK}`;
  }
}
