import {
  SPAN_REQUEST_RECEIVED,
  SPAN_REQUEST_SENT,
  SPAN_REQUEST_SETTLED,
  SPAN_RESUME,
} from '@forkwatch/instrumentation/semconv';
import type { ByteReader } from '../byte-reader.js';
import type { ByteWriter } from '../byte-writer.js';
import type { ClientBaseline, RequestFact, ResumeFact } from '../session-state.js';
import { ownCounts } from '../session-state.js';
import { RS_ANSWERED_KEY, RS_COUNTED, RS_COUNTED_TRUE, RS_FOUND, RS_FOUND_TRUE, RS_GUARDED, RS_GUARDED_TRUE, RS_INC, RS_OUTCOME, RS_PREVIOUS_INC, RS_STATUS, R_INC, R_METHOD, R_RECEIVED, R_SENT, R_SENT_INC, R_SETTLED, R_TOKEN, R_TOOL } from './format.js';
import { type Cursor, readFact, spanFact, writeFact } from './span-fact-record.js';

// Resume, request, baseline and count records of format 3: each write next to its read, so a
// round trip is reviewed in one place.
export function writeResume(w: ByteWriter, r: ResumeFact, cur: Cursor): void {
  writeFact(w, r.side, r.traceId, r.spanId, r.timeMs, r.ingestMs, 0, cur);
  let bits = 0;
  if (r.status !== undefined) bits |= RS_STATUS;
  if (r.inc !== undefined) bits |= RS_INC;
  if (r.previousInc !== undefined) bits |= RS_PREVIOUS_INC;
  if (r.answeredKey !== undefined) bits |= RS_ANSWERED_KEY;
  if (r.found !== undefined) bits |= r.found ? RS_FOUND | RS_FOUND_TRUE : RS_FOUND;
  if (r.outcome !== undefined) bits |= RS_OUTCOME;
  if (r.counted !== undefined) bits |= r.counted ? RS_COUNTED | RS_COUNTED_TRUE : RS_COUNTED;
  if (r.guarded !== undefined) bits |= r.guarded ? RS_GUARDED | RS_GUARDED_TRUE : RS_GUARDED;
  w.varuint(bits);
  w.str(r.lastEventId);
  if (r.status !== undefined) w.num(r.status);
  if (r.inc !== undefined) w.str(r.inc);
  if (r.previousInc !== undefined) w.str(r.previousInc);
  if (r.answeredKey !== undefined) w.str(r.answeredKey);
  if (r.outcome !== undefined) w.str(r.outcome);
}

export function readResume(r: ByteReader, cur: Cursor): ResumeFact {
  const h = readFact(r, cur);
  const bits = r.varuint();
  return {
    traceId: h.traceId,
    spanId: h.spanId,
    side: h.side,
    name: SPAN_RESUME,
    timeMs: h.timeMs,
    ingestMs: h.ingestMs,
    lastEventId: r.str(),
    status: bits & RS_STATUS ? r.num() : undefined,
    inc: bits & RS_INC ? r.str() : undefined,
    previousInc: bits & RS_PREVIOUS_INC ? r.str() : undefined,
    answeredKey: bits & RS_ANSWERED_KEY ? r.str() : undefined,
    found: bits & RS_FOUND ? (bits & RS_FOUND_TRUE) !== 0 : undefined,
    outcome: bits & RS_OUTCOME ? r.str() : undefined,
    counted: bits & RS_COUNTED ? (bits & RS_COUNTED_TRUE) !== 0 : undefined,
    guarded: bits & RS_GUARDED ? (bits & RS_GUARDED_TRUE) !== 0 : undefined,
  };
}

export function writeRequest(w: ByteWriter, r: RequestFact, cur: Cursor): void {
  let bits = 0;
  if (r.method !== undefined) bits |= R_METHOD;
  if (r.tool !== undefined) bits |= R_TOOL;
  if (r.progressToken !== undefined) bits |= R_TOKEN;
  if (r.inc !== undefined) bits |= R_INC;
  if (r.sentInc !== undefined) bits |= R_SENT_INC;
  if (r.sent !== undefined) bits |= R_SENT;
  if (r.received !== undefined) bits |= R_RECEIVED;
  if (r.settled !== undefined) bits |= R_SETTLED;
  w.u8(bits);
  w.str(r.requestId);
  if (r.method !== undefined) w.str(r.method);
  if (r.tool !== undefined) w.str(r.tool);
  if (r.progressToken !== undefined) w.str(r.progressToken);
  if (r.inc !== undefined) w.str(r.inc);
  if (r.sentInc !== undefined) w.str(r.sentInc);
  const { sent, received, settled } = r;
  if (sent !== undefined) writeFact(w, sent.side, sent.traceId, sent.spanId, sent.timeMs, sent.ingestMs, r.sentGuarded === true ? 1 : 0, cur);
  if (received !== undefined) {
    writeFact(w, received.side, received.traceId, received.spanId, received.timeMs, received.ingestMs, received.inc !== undefined ? 1 : 0, cur);
    if (received.inc !== undefined) w.str(received.inc);
  }
  if (settled !== undefined) {
    writeFact(w, settled.side, settled.traceId, settled.spanId, settled.timeMs, settled.ingestMs, (settled.outcome !== undefined ? 1 : 0) | (settled.streamClosed === true ? 2 : 0), cur);
    if (settled.outcome !== undefined) w.str(settled.outcome);
  }
}

export function readRequest(r: ByteReader, cur: Cursor): RequestFact {
  const bits = r.u8();
  // Field order and presence as the engine builds requests (record-span.ts): one shape.
  const q: RequestFact = {
    requestId: r.str(),
    method: bits & R_METHOD ? r.str() : undefined,
    tool: bits & R_TOOL ? r.str() : undefined,
    progressToken: bits & R_TOKEN ? r.str() : undefined,
    inc: bits & R_INC ? r.str() : undefined,
    sentInc: bits & R_SENT_INC ? r.str() : undefined,
    sent: undefined,
    sentGuarded: undefined,
    received: undefined,
    settled: undefined,
  };
  if (bits & R_SENT) {
    const h = readFact(r, cur);
    q.sent = spanFact(h, SPAN_REQUEST_SENT);
    if (h.bits & 1) q.sentGuarded = true;
  }
  if (bits & R_RECEIVED) {
    const h = readFact(r, cur);
    const f = spanFact(h, SPAN_REQUEST_RECEIVED);
    q.received = { traceId: f.traceId, spanId: f.spanId, side: f.side, name: f.name, timeMs: f.timeMs, ingestMs: f.ingestMs, inc: h.bits & 1 ? r.str() : undefined };
  }
  if (bits & R_SETTLED) {
    const h = readFact(r, cur);
    const f = spanFact(h, SPAN_REQUEST_SETTLED);
    q.settled = { traceId: f.traceId, spanId: f.spanId, side: f.side, name: f.name, timeMs: f.timeMs, ingestMs: f.ingestMs, outcome: h.bits & 1 ? r.str() : undefined };
    if (h.bits & 2) q.settled.streamClosed = true;
  }
  return q;
}

export function writeBaseline(w: ByteWriter, b: ClientBaseline): void {
  w.u8((b.maxSeq !== undefined ? 1 : 0) | (b.inc !== undefined ? 2 : 0) | (b.lastEventId !== undefined ? 4 : 0));
  w.f64(b.timeMs);
  if (b.maxSeq !== undefined) w.num(b.maxSeq);
  if (b.inc !== undefined) w.str(b.inc);
  if (b.lastEventId !== undefined) w.str(b.lastEventId);
}

export function readBaseline(r: ByteReader): ClientBaseline {
  const bits = r.u8();
  const b: ClientBaseline = { timeMs: r.f64() };
  if (bits & 1) b.maxSeq = r.num();
  if (bits & 2) b.inc = r.str();
  if (bits & 4) b.lastEventId = r.str();
  return b;
}

export function writeCounts(w: ByteWriter, counts: Record<string, number>): void {
  let n = 0;
  for (const _ in counts) n++;
  w.varuint(n);
  for (const k in counts) {
    w.str(k);
    w.num(counts[k]!);
  }
}

/** Reads counts into `out` (made its own first when it is the shared empty one: see NO_COUNTS) and returns it. */
export function readCounts(r: ByteReader, out: Record<string, number>): Record<string, number> {
  let n = r.varuint();
  if (n > 0) out = ownCounts(out);
  for (; n > 0; n--) setOwn(out, r.str(), r.num());
  return out;
}

/** A hostile `__proto__` key becomes an own property rather than the object's prototype. */
export function setOwn<T>(o: Record<string, T>, k: string, v: T): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}

export function hasKeys(o: object): boolean {
  for (const _ in o) return true;
  return false;
}
