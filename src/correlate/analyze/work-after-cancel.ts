import type { StatelessCall } from '../stateless/stateless-call.js';
import { RUNBOOK_DUPLICATE } from './runbook.js';
import { type AnomalyDraft, describeCall } from './stateless-shared.js';

/**
 * work_after_cancel: the server sent messages (progress, the answer) for a request after its
 * response stream had closed, which 2026-07-28 counts as cancellation: the handler did not stop.
 */
export function workAfterCancel(o: StatelessCall): AnomalyDraft | undefined {
  const h = o.handled;
  if (h === undefined || !h.streamClosed || !(h.messagesAfterClose > 0)) return undefined;
  return {
    kind: 'work_after_cancel',
    call: o,
    identity: `late:${o.ref}`,
    summary:
      `${describeCall(o)}: the server sent ${h.messagesAfterClose} message(s) after its response stream closed (a cancellation): ` +
      `the handler kept working for nobody; honour the request's abort signal, see ${RUNBOOK_DUPLICATE}`,
    evidence: [{ fact: h, shows: `server handler ${h.outcome ?? 'ended'}, ${h.messagesAfterClose} message(s) sent after the stream closed` }],
  };
}
