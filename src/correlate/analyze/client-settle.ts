import type { SpanFact } from '../session-state.js';

/** A settle as the rules read it: who emitted it and how the request stopped waiting. */
export type SettleFact = Pick<SpanFact, 'side'> & { outcome?: string };

/**
 * Client outcomes where the client saw its call fail rather than wait for it: a send or read
 * failure (`transport_error`, e.g. a POST answered `400`), a JSON-RPC error, a guard failing it on
 * a fork or a `404`. `timeout` is not one: waiting to the timeout is the hang an orphan is.
 */
const CLIENT_SAW_FAIL: ReadonlySet<string> = new Set(['transport_error', 'error', 'failed_fork', 'failed_session_lost']);

/**
 * The client's own settle says its app cancelled the call (an abort signal, `notifications/cancelled`
 * of its own, closing the client): never an orphan on any path (SPEC, "A call its own app
 * cancelled, or that its client saw fail, is never an orphan"). The sidecar proxy's settle
 * (server side) is not the app's word: it sees only the cancel on the wire, also sent on a timeout.
 */
export function appCancelled(s: SettleFact | undefined): boolean {
  return s !== undefined && s.side === 'client' && s.outcome === 'cancelled';
}

/**
 * The client's own settle says the app ended the call itself or saw it fail: answered, cancelled,
 * or failed ({@link CLIENT_SAW_FAIL}). Such a sessionful request is never `orphaned_progress_token`.
 * The stateless rule keeps its own reading of `transport_error` and `stream_broken` (a broken
 * stream is what `orphaned_request` is made of) and shares {@link appCancelled}.
 */
export function clientEndedOrSawFail(s: SettleFact | undefined): boolean {
  if (s === undefined || s.side !== 'client' || s.outcome === undefined) return false;
  return s.outcome === 'answered' || appCancelled(s) || CLIENT_SAW_FAIL.has(s.outcome);
}
