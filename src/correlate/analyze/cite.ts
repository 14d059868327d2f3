import type { SpanFact } from '../session-state.js';
import type { FindingDraft } from './types.js';

/** Evidence spans listed per finding: enough to investigate, bounded so findings stay small. */
export const MAX_EVIDENCE = 16;

/** Adds a span to a finding's evidence once, up to {@link MAX_EVIDENCE}. */
export function cite(d: FindingDraft, fact: SpanFact, shows: string): void {
  if (d.evidence.length >= MAX_EVIDENCE) return;
  for (const e of d.evidence) if (e.fact.spanId === fact.spanId && e.fact.traceId === fact.traceId) return;
  d.evidence.push({ fact, shows });
}
