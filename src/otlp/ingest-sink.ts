import type { SpanRecord } from '../model/span-record.js';
import type { RejectReason } from './decode-result.js';

/** Counts of one accepted OTLP request, handed to the sink with its spans. */
export interface IngestMeta {
  /** Every span in the request (forkwatch and foreign, accepted or rejected). */
  received: number;
  /** Spans that were not forkwatch spans, skipped. */
  foreign: number;
  /** Forkwatch spans rejected by the decoder. */
  rejected: number;
  rejectReasons: Partial<Record<RejectReason, number>>;
}

/**
 * Why a sink refused a batch at once: `'overloaded'` (its queue is full) or
 * `{ storage: message }` (storage is failing; the answer names it).
 */
export type IngestRefusal = 'overloaded' | { storage: string };

/**
 * Where the OTLP receiver hands decoded forkwatch spans. It is only called with at least one span.
 *
 * Return `'overloaded'` to refuse the batch (the receiver answers `503` with `Retry-After` and the
 * exporter retries), or a promise that settles once the spans are safely queued; a rejected
 * promise or a throw is treated as transient overload too.
 */
export interface IngestSink {
  offer(spans: SpanRecord[], meta: IngestMeta): Promise<void> | IngestRefusal;
}
