import type { SpanRecord } from '../model/span-record.js';
import { SpanBatchWriter } from '../model/span-batch.js';
import { ATTR_SIDE } from '@forkwatch/instrumentation/semconv';
import { summarizeRejects } from './decode-result.js';
import type { DecodeResult, RejectReason } from './decode-result.js';
import { attachBatch } from './decoded-batch.js';
import { spanRecordsOf } from './span-records-of.js';

// Shared by every request (decoding is synchronous): its columns keep their capacity.
const ROWS = new SpanBatchWriter();

/**
 * Collects spans and counters while a decoder walks one request; shared by both decoders. The
 * JSON decoder offers whole records ({@link offer}); the protobuf decoder writes rows
 * ({@link rows}, then {@link offerRow}), and its result's `spans` are made from them only when read.
 */
export class DecodeAccumulator {
  private readonly spans: SpanRecord[] = [];
  /** The protobuf decoder's rows: a span's attributes are added to it before {@link offerRow}. */
  readonly rows = ROWS;
  total = 0;
  foreign = 0;
  rejected = 0;
  readonly reasons: Partial<Record<RejectReason, number>> = {};

  reject(reason: RejectReason): void {
    this.rejected++;
    this.reasons[reason] = (this.reasons[reason] ?? 0) + 1;
  }

  /** Accepts `span` unless its `forkwatch.side` is not client/server (ids are checked by the caller). */
  offer(span: SpanRecord): void {
    const side = span.attributes[ATTR_SIDE];
    if (side !== 'client' && side !== 'server') {
      this.reject('invalid_side');
      return;
    }
    this.spans.push(span);
  }

  /** As {@link offer}, for the span whose attributes were just added to {@link rows}. */
  offerRow(traceId: string, spanId: string, parentSpanId: string, name: string, startMs: number, endMs: number, service: string): void {
    const side = this.rows.pendingSide();
    if (side !== 'client' && side !== 'server') {
      this.rows.dropAttributes();
      this.reject('invalid_side');
      return;
    }
    this.rows.endRow(traceId, spanId, parentSpanId, name, startMs, endMs, service);
  }

  result(): DecodeResult {
    let r: DecodeResult;
    if (this.rows.length === 0) {
      r = { spans: this.spans, total: this.total, foreign: this.foreign, rejected: this.rejected, rejectReasons: this.reasons };
    } else {
      const batch = this.rows.take();
      let spans: SpanRecord[] | undefined;
      r = {
        get spans(): SpanRecord[] {
          return (spans ??= spanRecordsOf(batch));
        },
        set spans(v: SpanRecord[]) {
          spans = v;
        },
        total: this.total,
        foreign: this.foreign,
        rejected: this.rejected,
        rejectReasons: this.reasons,
      };
      attachBatch(r, batch);
    }
    if (this.rejected > 0) r.errorMessage = summarizeRejects(this.rejected, this.reasons);
    return r;
  }
}
