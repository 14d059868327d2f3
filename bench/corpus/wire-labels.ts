import { parseEventId } from '@forkwatch/instrumentation/wire';
import type { FindingKind } from '../../src/model/finding.js';
import type { TappedEvent, TappedExchange } from '../../src/demo/wire-tap.js';
import type { CellRun } from './run-cell.js';
import { labelStateless } from './stateless-labels.js';

/** The ground truth of one run: each finding kind that happened, with the wire's reason. */
export type Labels = Map<FindingKind, string>;

/**
 * Labels a run from what happened, never from forkwatch's spans: the client's wire tap (every
 * exchange, every id-bearing SSE event as it arrived off the network), the app's outcome of each
 * call, and the server's own account of sessions it created for a client-supplied id (the demo
 * servers' observations, a third-party server's log). One label per kind per run.
 *
 * - `minted_on_resume`: the server created a session for an id the client supplied (a resume or
 *   a request on a reaped session), by its own account.
 * - `incarnation_changed`: one session id answered under two `Mcp-Session-Incarnation` values, or
 *   its event ids name two incarnations.
 * - `sequence_regression`: on one session id that was resumed, an event arriving after the resume
 *   whose sequence is lower than one received before.
 * - `replay_gap`: a resume answered 2xx by a server that kept the session, whose replay starts
 *   past the cursor + 1 or re-sends an event at or before the cursor.
 * - `dedup_loss`: the app's `(session id, event id)` dedup (the seed's stock app) met
 *   an id again carrying another message: it dropped a message the client never had.
 * - `orphaned_progress_token`: a call (each carries a progress token) that was never answered
 *   and left the app waiting to its timeout or the run's end: not cancelled by the app, not
 *   failed on the client.
 * - Stateless runs (no session): `orphaned_request`, `work_after_cancel`, `duplicate_execution`,
 *   see stateless-labels.ts.
 */
export function labelRun(run: CellRun): Labels {
  // A stateless run has no session, ids or resumes: its kinds and rules are its own.
  if (run.stateless) return labelStateless(run.stateless);
  const { r } = run;
  const labels: Labels = new Map();
  if (run.serverRehydrations > 0) labels.set('minted_on_resume', `the server created ${run.serverRehydrations} session(s) for a client-supplied id`);

  const incarnations = new Map<string, Set<string>>();
  const note = (sid: string | undefined, inc: string | undefined): void => {
    if (sid === undefined || inc === undefined) return;
    const s = incarnations.get(sid) ?? new Set<string>();
    s.add(inc);
    incarnations.set(sid, s);
  };
  for (const x of r.wire.exchanges) if (x.status < 300) note(x.answeredSessionId ?? x.sessionId, x.incarnation);
  for (const e of r.wire.events) note(e.sessionId, parseEventId(e.eventId).incarnation);
  for (const [sid, s] of incarnations) if (s.size > 1) labels.set('incarnation_changed', `session ${sid.slice(0, 8)} answered under incarnations ${[...s].join(', ')}`);

  const regression = regressionAfterResume(r.wire.exchanges, r.wire.events);
  if (regression) labels.set('sequence_regression', regression);

  const gap = replayGap(run);
  if (gap) labels.set('replay_gap', gap);

  if (run.appDedup) {
    const first = new Map<string, TappedEvent>();
    for (const e of r.wire.events) {
      const key = `${e.sessionId ?? ''}\u0000${e.eventId}`;
      const f = first.get(key);
      if (f === undefined) first.set(key, e);
      else if (describe(f) !== describe(e)) {
        labels.set('dedup_loss', `event id ${e.eventId} came again carrying ${describe(e)} (first ${describe(f)}): the app's dedup dropped it`);
        break;
      }
    }
  }

  const waiting = r.calls.filter((c) => c.outcome === 'timeout' || c.outcome === 'pending');
  if (waiting.length > 0) labels.set('orphaned_progress_token', `call(s) ${waiting.map((c) => `${c.attempt} ${c.outcome}`).join(', ')}: never answered, the app waited`);
  return labels;
}

function describe(e: TappedEvent): string {
  const i = e.info;
  return `${i.kind}${i.id !== undefined ? ` id ${i.id}` : ''}${i.method ? ` ${i.method}` : ''}${i.progressToken !== undefined ? ` token ${i.progressToken}` : ''}`;
}

/** The first resume whose replay skipped or re-sent, as the wire shows it; undefined when none did. */
function replayGap(run: CellRun): string | undefined {
  if (run.serverRehydrations > 0) return undefined;
  const { exchanges, events } = run.r.wire;
  for (let i = 0; i < exchanges.length; i++) {
    const x = exchanges[i]!;
    if (x.lastEventId === undefined || x.status >= 300) continue;
    const cursor = parseEventId(x.lastEventId).seq;
    if (cursor === undefined) continue;
    const seqs = events.filter((e) => e.exchange === i).map((e) => parseEventId(e.eventId).seq).filter((s): s is number => s !== undefined);
    if (seqs.length === 0) continue;
    const resent = seqs.find((s) => s <= cursor);
    if (resent !== undefined) return `the resume from ${x.lastEventId} re-sent seq ${resent}`;
    if (seqs[0]! > cursor + 1) return `the resume from ${x.lastEventId} continued at seq ${seqs[0]}`;
  }
  return undefined;
}

/** The first event, after a resume of its session id, whose sequence is below one received before it. */
function regressionAfterResume(exchanges: readonly TappedExchange[], events: readonly TappedEvent[]): string | undefined {
  const resumedAt = new Map<string, number>();
  for (const x of exchanges) {
    const sid = x.sessionId;
    if (x.lastEventId !== undefined && sid !== undefined && !resumedAt.has(sid)) resumedAt.set(sid, x.at);
  }
  const high = new Map<string, { seq: number; id: string }>();
  for (const e of events) {
    const seq = parseEventId(e.eventId).seq;
    if (seq === undefined) continue;
    const sid = e.sessionId ?? '';
    const h = high.get(sid);
    const resumed = resumedAt.get(sid);
    if (h && seq < h.seq && resumed !== undefined && e.at >= resumed) return `event ${e.eventId} arrived after ${h.id} on session ${sid.slice(0, 8)}, after its resume`;
    if (!h || seq > h.seq) high.set(sid, { seq, id: e.eventId });
  }
  return undefined;
}
