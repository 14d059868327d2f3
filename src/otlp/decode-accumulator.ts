import type { AttrValue, SpanRecord } from '../model/span-record.js';
import { summarizeRejects } from './decode-result.js';
import type { DecodeResult, RejectReason } from './decode-result.js';

/** Collects spans and counters while a decoder walks one request; shared by both decoders. */
export class DecodeAccumulator {
  readonly spans: SpanRecord[] = [];
  total = 0;
  foreign = 0;
  rejected = 0;
  readonly reasons: Partial<Record<RejectReason, number>> = {};

  reject(reason: RejectReason): void {
    this.rejected++;
    this.reasons[reason] = (this.reasons[reason] ?? 0) + 1;
  }

  /**
   * Accepts `span` unless `side`, its `forkwatch.side` (`span.attributes[ATTR_SIDE]`, which the
   * decoder knows as it builds the record), is not client/server. Ids are checked by the caller.
   */
  offer(span: SpanRecord, side: AttrValue | undefined): void {
    if (side !== 'client' && side !== 'server') {
      this.reject('invalid_side');
      return;
    }
    this.spans.push(span);
  }

  result(): DecodeResult {
    const r: DecodeResult = {
      spans: this.spans,
      total: this.total,
      foreign: this.foreign,
      rejected: this.rejected,
      rejectReasons: this.reasons,
    };
    if (this.rejected > 0) r.errorMessage = summarizeRejects(this.rejected, this.reasons);
    return r;
  }
}

/**
 * Sets an attribute on a plain object; a hostile `__proto__` key becomes an own property instead
 * of replacing the prototype.
 */
export function setAttribute(attrs: Record<string, AttrValue>, key: string, value: AttrValue): void {
  if (key === '__proto__') {
    Object.defineProperty(attrs, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    attrs[key] = value;
  }
}
