import type { Evidence } from '../model/finding.js';
import type { SpanFact } from './session-state.js';

/** A finding's evidence as stored, and the times its detection lag and first sight come from. */
export interface CitedEvidence {
  evidence: Evidence[];
  /** Earliest span time among the evidence, ms; `now` when there is none. */
  firstSeenMs: number;
  /** Earliest ingest time among the evidence, ms; `now` when there is none. */
  firstIngestMs: number;
}

/** The stored form of what an analysis cited: one shape for sessionful and stateless findings. */
export function citedEvidence(cited: ReadonlyArray<{ fact: SpanFact; shows: string }>, now: number): CitedEvidence {
  let firstSeenMs = Infinity;
  let firstIngestMs = Infinity;
  const evidence: Evidence[] = cited.map(({ fact, shows }) => {
    firstSeenMs = Math.min(firstSeenMs, fact.timeMs);
    firstIngestMs = Math.min(firstIngestMs, fact.ingestMs);
    return { traceId: fact.traceId, spanId: fact.spanId, side: fact.side, timeMs: fact.timeMs, spanName: fact.name, shows };
  });
  return {
    evidence,
    firstSeenMs: Number.isFinite(firstSeenMs) ? firstSeenMs : now,
    firstIngestMs: Number.isFinite(firstIngestMs) ? firstIngestMs : now,
  };
}
