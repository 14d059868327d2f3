import type { StatelessCall } from '../stateless/stateless-call.js';
import { broke, isReissueOf } from './reissue.js';
import { RUNBOOK_DUPLICATE } from './runbook.js';
import { type AnomalyDraft, describeCall } from './stateless-shared.js';

/**
 * duplicate_execution: `o`'s stream broke, yet its handler completed, and a re-issue of it also
 * reached the handler and completed: the server executed the call twice (no idempotency key
 * exists in 2026-07-28). A re-issue whose original the server cancelled, or a retry of a call that
 * failed, is not one.
 */
export function duplicateExecution(o: StatelessCall, same: Iterable<StatelessCall>, windowMs: number): AnomalyDraft | undefined {
  if (!broke(o) || o.handled?.outcome !== 'completed') return undefined;
  let r: StatelessCall | undefined;
  for (const x of same) {
    if (x.handled?.outcome === 'completed' && isReissueOf(x, o, windowMs) && (r === undefined || x.handled.timeMs < r.handled!.timeMs)) r = x;
  }
  if (r === undefined) return undefined;
  const evidence: AnomalyDraft['evidence'] = [];
  if (o.sent !== undefined) evidence.push({ fact: o.sent, shows: `client sent ${describeCall(o)}` });
  if (o.settled !== undefined) evidence.push({ fact: o.settled, shows: `client lost its response stream (${o.settled.outcome ?? '?'})` });
  evidence.push({
    fact: o.handled,
    shows: `server completed ${describeCall(o)}${o.handled.streamClosed ? ' after its stream had closed' : ''}`,
  });
  if (r.sent !== undefined) evidence.push({ fact: r.sent, shows: `client re-issued it as request ${r.requestId}` });
  evidence.push({ fact: r.handled!, shows: `server completed the re-issue ${describeCall(r)} as well` });
  return {
    kind: 'duplicate_execution',
    call: o,
    identity: `dup:${o.ref}`,
    summary:
      `${describeCall(o)} lost its response stream and was re-issued as request ${r.requestId}, but the server completed both: ` +
      `the tool ran twice; stop the handler when its stream closes (closing counts as cancellation) or make the tool idempotent, see ${RUNBOOK_DUPLICATE}`,
    evidence,
  };
}
