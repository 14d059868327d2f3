import { closeIsCancel, type StatelessCall } from '../stateless/stateless-call.js';
import { appCancelled } from './client-settle.js';
import { broke, isReissueOf } from './reissue.js';
import { RUNBOOK_ORPHANED_REQUEST } from './runbook.js';
import { type AnomalyDraft, describeCall } from './stateless-shared.js';

/**
 * orphaned_request: the call's response stream broke, it was never answered and not re-issued
 * within the window. The caller decides only once the window has passed. The break must show that
 * the request was accepted (client `stream_broken`, or a server span of it): a connection refused
 * before any stream is an error the app saw, not an orphan.
 */
export function orphanedRequest(o: StatelessCall, same: Iterable<StatelessCall>, windowMs: number): AnomalyDraft | undefined {
  // The app cancelled it: its stream closing was the cancel (2026-07-28), not a loss.
  if (appCancelled(o.settled) || !broke(o)) return undefined;
  // Only the server's word that the stream closed, on a revision where closing it is the cancel:
  // a cut and the app's abort are the same bytes there. The client's settle (an instrumented
  // client) tells them apart; a re-issue still makes the close a loss (duplicate_execution).
  if (o.settled === undefined && o.handled?.streamClosed === true && closeIsCancel(o.handled.protocolVersion)) return undefined;
  const accepted = o.settled?.outcome === 'stream_broken' || o.handled !== undefined || o.received !== undefined;
  if (!accepted) return undefined;
  for (const x of same) if (isReissueOf(x, o, windowMs)) return undefined;
  const evidence: AnomalyDraft['evidence'] = [];
  if (o.sent !== undefined) evidence.push({ fact: o.sent, shows: `client sent ${describeCall(o)}` });
  if (o.received !== undefined) evidence.push({ fact: o.received, shows: `server read ${describeCall(o)}` });
  if (o.handled !== undefined) {
    evidence.push({ fact: o.handled, shows: `server handler ${o.handled.outcome ?? 'ended'}${o.handled.streamClosed ? ' after the stream had closed' : ''}` });
  }
  if (o.settled !== undefined) evidence.push({ fact: o.settled, shows: `client lost the response stream (${o.settled.outcome ?? '?'}) without an answer` });
  return {
    kind: 'orphaned_request',
    call: o,
    identity: `orphan:${o.ref}`,
    summary:
      `${describeCall(o)} lost its response stream and was neither answered nor re-issued within ${Math.round(windowMs / 1000)} s: ` +
      `the caller never got a result; clients must re-issue a call whose stream broke, see ${RUNBOOK_ORPHANED_REQUEST}`,
    evidence,
  };
}
