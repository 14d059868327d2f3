import { parseEventId } from './building-blocks.js';
import type { SessionEventLog } from './session-event-log.js';

/**
 * How an event an upstream sends relates to the session's log as the proxy saw it:
 * `continues` (new, after everything), `restarts` (the upstream's log began again: same id with
 * another payload, or an id-carried sequence at or below one already seen; a new life of the
 * session id, the fork), `regresses` (an event of the same log from at or before the resume's
 * cursor: replay from too early), `unknown` (nothing to compare).
 */
export type Continuity = 'continues' | 'restarts' | 'regresses' | 'unknown';

/**
 * Judges the first id-bearing event `id` (payload fingerprint `print`, payload-print.ts) an upstream sends on a session
 * the proxy knows. `cursor`: the `Last-Event-ID` of a resume, undefined on other answers.
 * Pure: reads the log, records nothing.
 */
export function judgeEvent(log: SessionEventLog, id: string, print: number, cursor: string | undefined): Continuity {
  const known = log.get(id);
  if (known !== undefined && known.print !== print) return 'restarts';
  const parsed = parseEventId(id);
  if (cursor !== undefined) {
    const c = log.get(cursor);
    const cp = parseEventId(cursor);
    const cursorSeq = cp.seq ?? c?.seq;
    if (parsed.source === 'server' && cp.source === 'server' && parsed.incarnation !== cp.incarnation) return 'restarts';
    const seq = parsed.seq ?? known?.seq;
    const comparable = cursorSeq !== undefined && seq !== undefined && (parsed.seq !== undefined) === (cp.seq !== undefined);
    if (comparable && seq <= cursorSeq) return known !== undefined ? 'regresses' : 'restarts';
    if (comparable) return 'continues';
    return known !== undefined ? 'continues' : 'unknown';
  }
  // An id already sent, now opening a new answer: the upstream numbers a new log from the start.
  // (A counter below the highest is not enough here: concurrent streams of one session interleave.)
  if (known !== undefined) return 'restarts';
  return 'continues';
}

/** The guard refuses an answer that would fork the session (docs/proxy.md, "The guard's rules"). */
export function forks(c: Continuity): boolean {
  return c === 'restarts' || c === 'regresses';
}

/** A request presenting `presented` answered under another session id: the upstream reissued the session. */
export function sessionReissued(presented: string | undefined, answered: string | undefined): boolean {
  return presented !== undefined && answered !== undefined && answered !== presented;
}
