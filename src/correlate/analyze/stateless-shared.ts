import type { FindingKind } from '../../model/finding.js';
import type { SpanFact } from '../session-state.js';
import type { StatelessCall } from '../stateless/stateless-call.js';

/** A stateless anomaly before the engine gives it an id and times. */
export interface AnomalyDraft {
  kind: FindingKind;
  /** The call the finding is about (the original for duplicates). */
  call: StatelessCall;
  identity: string;
  summary: string;
  evidence: Array<{ fact: SpanFact; shows: string }>;
}

/** "tools/call (slow_report) request 4" */
export function describeCall(c: StatelessCall): string {
  return `${c.method ?? 'request'}${c.tool !== undefined ? ` (${c.tool})` : ''} request ${c.requestId}`;
}
