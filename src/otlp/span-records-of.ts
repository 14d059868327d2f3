import type { SpanBatch } from '../model/span-batch.js';
import type { SpanRecord } from '../model/span-record.js';
import { AttributeShapes } from './attribute-shapes.js';

// Shared by all calls (synchronous): the shapes it learnt serve the next batches.
const SHAPES = new AttributeShapes();

/**
 * The rows of `batch` as {@link SpanRecord}s, attributes in wire order (a key given twice keeps
 * its first place and takes its last value), as the decoders' `spans`.
 */
export function spanRecordsOf(batch: SpanBatch): SpanRecord[] {
  const out: SpanRecord[] = [];
  const { attrStart, keyCode, values } = batch;
  for (let i = 0; i < batch.length; i++) {
    SHAPES.begin();
    for (let j = attrStart[i]!, e = attrStart[i + 1]!; j < e; j++) SHAPES.add(batch.keyAt(j), Math.max(-1, keyCode[j]!), values[j]!);
    out.push({
      traceId: batch.traceId[i]!,
      spanId: batch.spanId[i]!,
      parentSpanId: batch.parentSpanId[i]!,
      name: batch.name[i]!,
      startMs: batch.startMs[i]!,
      endMs: batch.endMs[i]!,
      service: batch.service[i]!,
      attributes: SHAPES.build(),
    });
  }
  return out;
}
