import type { Side } from '../../model/span-record.js';
import type { ByteReader } from '../byte-reader.js';
import type { ByteWriter } from '../byte-writer.js';
import type { SpanFact } from '../session-state.js';
import { F_CLIENT, F_SAME_INGEST, F_SHIFT } from './format.js';

// The header every span fact of format 3 starts with: side, ids, time, and the ingest time only
// when it differs from the previous fact's.
/** The ingest time of the previous fact written or read: most facts of a batch share it. */
export interface Cursor {
  ingestMs: number;
}

export function writeFact(w: ByteWriter, f: SpanFact, bits: number, cur: Cursor): void {
  const same = f.ingestMs === cur.ingestMs;
  w.u8((bits << F_SHIFT) | (f.side === 'client' ? F_CLIENT : 0) | (same ? F_SAME_INGEST : 0));
  w.id(f.traceId);
  w.id(f.spanId);
  w.f64(f.timeMs);
  if (!same) {
    w.f64(f.ingestMs);
    cur.ingestMs = f.ingestMs;
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
  const traceId = r.id();
  const spanId = r.id();
  const timeMs = r.f64();
  if ((flags & F_SAME_INGEST) === 0) cur.ingestMs = r.f64();
  else if (Number.isNaN(cur.ingestMs)) throw new TypeError('malformed span fact');
  return { traceId, spanId, side, timeMs, ingestMs: cur.ingestMs, bits: flags >>> F_SHIFT };
}

export function spanFact(h: FactHeader, name: string): SpanFact {
  return { traceId: h.traceId, spanId: h.spanId, side: h.side, name, timeMs: h.timeMs, ingestMs: h.ingestMs };
}
