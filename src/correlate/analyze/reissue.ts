import type { StatelessCall } from '../stateless/stateless-call.js';
import { BROKEN_OUTCOMES } from '../stateless/stateless-call.js';

/**
 * Whether the call's response stream broke before its answer: the client settled it
 * `stream_broken`/`transport_error`, or (no client settle seen, or only its timeout) the server's
 * stream closed first. A call the client saw answered, or cancelled, did not break, whatever the
 * server saw.
 */
export function broke(c: StatelessCall): boolean {
  const out = c.settled?.outcome;
  if (out !== undefined && BROKEN_OUTCOMES.has(out)) return true;
  // A client that waited to its timeout saw no break itself: an SDK 1.x client does not fail a
  // call whose stream ended without an event id to resume from, it waits. The server's close says.
  if (out !== undefined && out !== 'timeout') return false;
  return c.handled?.streamClosed === true;
}

/**
 * Whether `r` is a re-issue of `o` (same method, tool and argument digest, checked by the caller):
 * sent by the same client service after `o` and at most `windowMs` after `o` broke (client clock);
 * without client spans on both, read by the same server service after `o` arrived and at most
 * `windowMs` after `o`'s handler finished (server clock).
 */
export function isReissueOf(r: StatelessCall, o: StatelessCall, windowMs: number): boolean {
  if (r === o) return false;
  if (r.sent !== undefined && o.sent !== undefined) {
    if (r.clientService !== o.clientService) return false;
    const brokeAt = o.settled?.timeMs ?? o.sent.timeMs;
    return r.sent.timeMs > o.sent.timeMs && r.sent.timeMs <= brokeAt + windowMs;
  }
  const rh = r.handled ?? r.received;
  const oh = o.handled;
  if (rh === undefined || oh === undefined || r.serverService !== o.serverService) return false;
  return rh.timeMs > oh.timeMs && rh.timeMs <= oh.endMs + windowMs;
}
