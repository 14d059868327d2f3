import { SpanBatch } from '../model/span-batch.js';
import type { DecodeResult } from './decode-result.js';

// A symbol, not enumerable: a result compares equal (assert.deepStrictEqual) whichever decoder made it.
const BATCH = Symbol('forkwatch.spanBatch');

/** Hands `batch` along with `result`, for {@link batchOf}. */
export function attachBatch(result: DecodeResult, batch: SpanBatch): void {
  Object.defineProperty(result, BATCH, { value: batch });
}

/**
 * The accepted spans of `result` as the engine takes them: the protobuf decoder's own rows (no
 * span or attribute record made), else rows built from `result.spans` once.
 */
export function batchOf(result: DecodeResult): SpanBatch {
  let b = (result as { [BATCH]?: SpanBatch })[BATCH];
  if (b === undefined) attachBatch(result, (b = SpanBatch.of(result.spans)));
  return b;
}
