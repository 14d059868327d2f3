import type { SpanRecord } from '../model/span-record.js';

/** Why a forkwatch span was rejected (counted, not ingested; the rest of the batch continues). */
export const REJECT_REASONS = [
  'invalid_trace_id', // not 16 bytes, or all zero
  'invalid_span_id', // not 8 bytes, or all zero
  'invalid_parent_span_id', // neither empty nor 8 bytes
  'invalid_side', // forkwatch.side missing or not client/server
  'attribute_too_deep', // an attribute value nested past maxNestingDepth
] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

/** What a decoder made of one ExportTraceServiceRequest. */
export interface DecodeResult {
  /** Accepted forkwatch spans, in wire order. */
  spans: SpanRecord[];
  /** Every span in the request: forkwatch (accepted or rejected) and foreign. */
  total: number;
  /** Spans whose name does not start with `forkwatch.`: skipped, never decoded further. */
  foreign: number;
  /** Forkwatch spans rejected; `rejectReasons` counts them by reason. */
  rejected: number;
  rejectReasons: Partial<Record<RejectReason, number>>;
  /** Set when `rejected > 0`: a one-line summary for OTLP `partial_success.error_message`. */
  errorMessage?: string;
}

/** What a receiver's answer and metrics need of a {@link DecodeResult}, without the spans. */
export interface DecodedCounts {
  /** Forkwatch spans the decoder accepted. */
  accepted: number;
  rejected: number;
  foreign: number;
  errorMessage?: string;
}

/** The counts of `result`; holding them instead of the result lets its spans be collected. */
export function countsOf(result: DecodeResult): DecodedCounts {
  const c: DecodedCounts = { accepted: result.spans.length, rejected: result.rejected, foreign: result.foreign };
  if (result.errorMessage !== undefined) c.errorMessage = result.errorMessage;
  return c;
}

/** Builds the partial-success message, e.g. "2 forkwatch spans rejected: invalid_side=2". */
export function summarizeRejects(rejected: number, reasons: Partial<Record<RejectReason, number>>): string {
  const parts = REJECT_REASONS.filter((r) => reasons[r]).map((r) => `${r}=${reasons[r]}`);
  return `${rejected} forkwatch span${rejected === 1 ? '' : 's'} rejected: ${parts.join(', ')}`;
}

/** Thrown by a decoder inside one span's attributes; the span is rejected, the batch goes on. */
export class AttributeTooDeep extends Error {}
