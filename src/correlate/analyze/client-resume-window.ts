import type { EventFact, ResumeFact } from '../session-state.js';
import type { SessionView } from './session-view.js';

export type SeqEvent = EventFact & { seq: number };

/** An event whose seq can be compared: stamped by the server or counted by the client. */
export const seqUsable = (e: EventFact): e is SeqEvent => e.seq !== undefined && (e.seqSource === 'server' || e.seqSource === 'counter');

/** What the client saw around one of its resumes: the input of sequence_regression and the client-side replay_gap. */
export interface ClientResumeWindow {
  resume: ResumeFact;
  /** Highest usable seq before the resume (since the last initialize), and its event. */
  maxBefore?: number;
  maxEv?: EventFact;
  /** The event named by Last-Event-ID, and its seq when known. */
  cursorEv?: EventFact;
  cursorSeq?: number;
  /** After the resume (until the next initialize or resume): up to 4 events at or before the cursor below the highest seen. */
  regressed?: SeqEvent[];
  /** The first event after the resume with a usable seq. */
  first?: SeqEvent;
}

/** The window of the i-th client resume (in time order). */
export function clientResumeWindow(v: SessionView, i: number): ClientResumeWindow {
  const { client, cRes, clientInits } = v;
  const base = v.s.clientBaseline;
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
  const w: ClientResumeWindow = { resume: R };
  for (const e of client) {
    if (!(e.timeMs < R.timeMs && e.timeMs >= lastInit)) continue;
    if (seqUsable(e) && (w.maxBefore === undefined || e.seq > w.maxBefore)) {
      w.maxBefore = e.seq;
      w.maxEv = e;
    }
    if (e.eventId === L) w.cursorEv = e;
  }
  if (base?.maxSeq !== undefined && base.timeMs < R.timeMs && base.timeMs >= lastInit) {
    w.maxBefore = Math.max(w.maxBefore ?? base.maxSeq, base.maxSeq);
  }
  const cursorEv = w.cursorEv;
  if (cursorEv !== undefined && seqUsable(cursorEv)) w.cursorSeq = cursorEv.seq;
  if (w.cursorSeq === undefined && base?.lastEventId === L && base.maxSeq !== undefined) w.cursorSeq = base.maxSeq;

  // A true replay only yields events after the cursor.
  let regressedCount = 0;
  for (const e of client) {
    if (!(e.timeMs >= R.timeMs && e.timeMs < endT) || !seqUsable(e)) continue;
    w.first ??= e;
    if (w.maxBefore !== undefined && e.seq < w.maxBefore && (w.cursorSeq === undefined || e.seq <= w.cursorSeq)) {
      if (regressedCount++ < 4) (w.regressed ??= []).push(e);
    }
  }
  return w;
}
