import type { Side } from '../../model/span-record.js';
import type { ByteReader } from '../byte-reader.js';
import type { ByteWriter } from '../byte-writer.js';
import type { SpanFact } from '../session-state.js';
import { F_CLIENT, F_SAME_INGEST, F_SAME_TRACE, F_SHIFT } from './format.js';

// The header every span fact of format 3 starts with: side, ids, time; the trace id and the
// ingest time only when they differ from the previous fact's.
/** The previous fact written or read: most facts of a batch share its ingest time, those of one HTTP exchange its trace id. */
export interface Cursor {
  ingestMs: number;
  traceId?: string;
}

/**
 * Writes a fact's header from its fields. The callers read them, each from its own kind of fact:
 * read here, from every kind of fact (events, requests' sends, settles, resumes...), each field
 * was a megamorphic load, and each time a heap number allocated for the value.
 */
export function writeFact(w: ByteWriter, side: Side, traceId: string, spanId: string, timeMs: number, ingestMs: number, bits: number, cur: Cursor): void {
  const same = ingestMs === cur.ingestMs;
  const sameTrace = traceId === cur.traceId;
  w.u8((bits << F_SHIFT) | (side === 'client' ? F_CLIENT : 0) | (same ? F_SAME_INGEST : 0) | (sameTrace ? F_SAME_TRACE : 0));
  if (!sameTrace) {
    w.id(traceId);
    cur.traceId = traceId;
  }
  w.id(spanId);
  w.f64(timeMs);
  if (!same) {
    w.f64(ingestMs);
    cur.ingestMs = ingestMs;
  }
}

/** A span fact's header as read; facts are then built as literals of their own fixed shape. */
export interface FactHeader {
  traceId: string;
  spanId: string;
  side: Side;
  timeMs: number;
  ingestMs: number;
  /** The fact kind's presence bits. */
  bits: number;
}

export function readFact(r: ByteReader, cur: Cursor): FactHeader {
  const flags = r.u8();
  const side: Side = flags & F_CLIENT ? 'client' : 'server';
  let traceId = cur.traceId;
  if ((flags & F_SAME_TRACE) === 0) cur.traceId = traceId = r.id();
  else if (traceId === undefined) throw new TypeError('malformed span fact');
  const spanId = r.id();
  const timeMs = r.f64();
  if ((flags & F_SAME_INGEST) === 0) cur.ingestMs = r.f64();
  else if (Number.isNaN(cur.ingestMs)) throw new TypeError('malformed span fact');
  return { traceId, spanId, side, timeMs, ingestMs: cur.ingestMs, bits: (flags & ~F_SAME_TRACE) >>> F_SHIFT };
}

export function spanFact(h: FactHeader, name: string): SpanFact {
  return { traceId: h.traceId, spanId: h.spanId, side: h.side, name, timeMs: h.timeMs, ingestMs: h.ingestMs };
}
