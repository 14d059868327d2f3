import { cite } from './cite.js';
import { is2xx } from './outcome-of-status.js';
import { RUNBOOK_FORK } from './runbook.js';
import type { SessionView } from './session-view.js';
import type { EventFact, ResumeFact } from '../session-state.js';
import type { FindingDraft } from './types.js';

/**
 * Server-side replay_gap from a replay out of order: a 2xx resume in the cursor's own incarnation
 * re-sent an event the server had first sent *before* the cursor. A store that replays "the
 * events after Last-Event-ID" by an order other than the one it stored them in does this, and
 * then also skips events stored after the cursor that sort before it. The SDK examples'
 * `InMemoryEventStore` is one: its ids end in a random part and its replay sorts them as strings,
 * so events of one millisecond come back in random order (test/e2e/example-store-replay.test.ts
 * loses two progress notifications that way). The skipped events themselves are not visible
 * (written to a broken stream, or never written), so this is the evidence there is; a store that
 * skips without ever replaying early is not seen by this rule.
 */
export function serverReplayOrder(v: SessionView): void {
  const { sRes, server } = v;
  for (let i = 0; i < sRes.length; i++) {
    const r = sRes[i]!;
    if (!is2xx(r.status) || r.inc === undefined || r.found === false || r.outcome === 'forked') continue;
    const cursor = firstSend(v, r.inc, r.lastEventId);
    if (cursor?.seq === undefined) continue;
    const until = nextResumeOf(sRes, i);
    let d: FindingDraft | undefined;
    for (const e of server) {
      if (e.timeMs < r.timeMs) continue;
      if (e.timeMs >= until) break;
      if (e.replayed !== true || e.inc !== r.inc || e.eventId === r.lastEventId) continue;
      const first = firstSend(v, r.inc, e.eventId);
      if (first?.seq === undefined || !(first.seq < cursor.seq) || !(first.timeMs <= cursor.timeMs)) continue;
      const identity = `resume:${r.lastEventId}`;
      d ??= v.draft('replay_gap', identity);
      if (d === undefined) {
        d = { kind: 'replay_gap', identity, evidence: [], summary: '' };
        d.incarnation = r.inc;
        d.resumeCursor = r.lastEventId;
        d.summary =
          `session ${v.k8()}: the server's replay after ${r.lastEventId} (seq ${cursor.seq}) re-sent ${e.eventId} (seq ${first.seq}), sent before it: ` +
          `its event store does not replay in the order it stored, so events stored after the cursor can be skipped ` +
          `(e.g. ids that do not sort in the order stored); the store must replay exactly the events after Last-Event-ID, see ${RUNBOOK_FORK}`;
        v.addDraft(d);
      }
      cite(d, cursor, `server sent the cursor ${r.lastEventId} as seq ${cursor.seq}`);
      cite(d, r, `server answered ${r.status} to the resume from ${r.lastEventId}`);
      cite(d, first, `server sent ${e.eventId} as seq ${first.seq}, before the cursor`);
      cite(d, e, `server replayed ${e.eventId} after the cursor`);
    }
  }
}

/** The one first (not replayed) send of `eventId` in `inc`; undefined when absent or ambiguous. */
function firstSend(v: SessionView, inc: string, eventId: string): EventFact | undefined {
  let found: EventFact | undefined;
  for (const e of v.serverById().get(eventId) ?? []) {
    if (e.inc !== inc || e.replayed === true) continue;
    if (found !== undefined) return undefined;
    found = e;
  }
  return found;
}

/** When the next server resume of the same incarnation began (its replay ends this one's). */
function nextResumeOf(sRes: readonly ResumeFact[], i: number): number {
  const inc = sRes[i]!.inc;
  for (let j = i + 1; j < sRes.length; j++) if (sRes[j]!.inc === inc && sRes[j]!.timeMs > sRes[i]!.timeMs) return sRes[j]!.timeMs;
  return Infinity;
}
