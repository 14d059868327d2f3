import { Counter, Gauge, type Registry } from 'prom-client';

/** The `reason` values of `forkwatch_spans_rejected_total`. */
export const REJECT_REASONS = [
  'decode_error',
  'too_large',
  'unsupported_media_type',
  'unauthorized',
  'overloaded',
  'invalid_span',
] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

/** What reached the OTLP receiver and what it did with it. */
export interface IngestFamilies {
  spansReceived: Counter<string>;
  spansIgnored: Counter<string>;
  spansRejected: Counter<'reason'>;
  otlpRequests: Counter<'code'>;
  queueSpans: Gauge<string>;
  lastSpanReceived: Gauge<string>;
}

export function createIngestFamilies(registry: Registry): IngestFamilies {
  const registers = [registry];
  const spansRejected = new Counter({
    name: 'forkwatch_spans_rejected_total',
    help: 'Spans refused by the OTLP receiver, by reason.',
    labelNames: ['reason'] as const,
    registers,
  });
  for (const reason of REJECT_REASONS) spansRejected.inc({ reason }, 0);
  return {
    spansReceived: new Counter({
      name: 'forkwatch_spans_received_total',
      help: 'Spans in accepted OTLP requests, forkwatch spans or not.',
      registers,
    }),
    spansIgnored: new Counter({
      name: 'forkwatch_spans_ignored_total',
      help: 'Accepted spans that are not forkwatch spans and were skipped.',
      registers,
    }),
    spansRejected,
    otlpRequests: new Counter({
      name: 'forkwatch_otlp_requests_total',
      help: 'OTLP export requests answered, by HTTP status code.',
      labelNames: ['code'] as const,
      registers,
    }),
    queueSpans: new Gauge({
      name: 'forkwatch_ingest_queue_spans',
      help: 'Spans accepted and waiting for the correlator.',
      registers,
    }),
    lastSpanReceived: new Gauge({
      name: 'forkwatch_last_span_received_timestamp_seconds',
      help: 'Unix time of the last accepted request that carried spans, seconds (0 = none yet).',
      registers,
    }),
  };
}
