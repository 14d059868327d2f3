import type { Side } from '../model/span-record.js';
import {
  SPAN_GUARD_FORK,
  SPAN_REQUEST_RECEIVED,
  SPAN_REQUEST_SENT,
  SPAN_REQUEST_SETTLED,
  SPAN_RESUME,
  SPAN_SESSION_CREATED,
  SPAN_SESSION_ENDED,
  SPAN_SSE_EVENT,
} from '@forkwatch/instrumentation/semconv';
import { ByteReader } from './byte-reader.js';
import type { ByteWriter } from './byte-writer.js';
import type {
  ClientBaseline,
  CreatedFact,
  EmittedFinding,
  EndedFact,
  EventFact,
  GuardForkFact,
  RequestFact,
  ResumeFact,
  SessionState,
  SpanFact,
} from './session-state.js';
import { newSessionState } from './session-state.js';

/**
 * First byte of a binary (format 3) session state. Formats 1 and 2 are JSON text and start with
 * `{`, so the first byte tells the formats apart.
 */
export const BINARY_STATE_FORMAT = 3;

// Format 3 is what the engine writes on every commit for every session it touched, so it is
// built for writing speed and size (a session of the ingest bench: ~1.3 KB, against ~5 KB of
// format-2 JSON): trace and span ids as raw bytes, a field equal to the previous event's as a
// 2-bit code, presence as bits. Only `emitted` (rare, holds whole findings) stays JSON.
// Append only: states in the field depend on every bit below.

// Session flags.
const S_STATELESS = 1;
const S_SERVER_SERVICE = 2;
const S_CLIENT_SERVICE = 4;
const S_PENDING = 8;
const S_BASELINE = 16;
const S_EMITTED = 32;

// Span fact header flags; bits 2..7 belong to the fact kind.
const F_CLIENT = 1;
const F_SAME_INGEST = 2;
const F_SHIFT = 2;

// Event field codes, 2 bits each in one u32, field i at bits 2i.
const C_NONE = 0;
const C_SAME = 1; // equal to the previous event's value
const C_VALUE = 2; // written
const C_ALT = 3; // a field-specific short form (see each field)
const EV_INC = 0;
const EV_ID = 1; // ALT: `${inc}-${seq}`
const EV_SEQ = 2; // SAME: previous + 1 (not "equal"); ALT: equal to the previous
const EV_SEQ_SOURCE = 3;
const EV_DIGEST = 4; // ALT: 16 lowercase hex as 8 bytes
const EV_KIND = 5;
const EV_RPC_ID = 6;
const EV_METHOD = 7;
const EV_TOKEN = 8;
const EV_STREAM = 9;
const EV_DELIVERY = 10;
const EV_REPLAYED = 11; // NONE, SAME = false, VALUE = true
const EV_SEEN_BEFORE = 12; // as replayed

// Request presence bits.
const R_METHOD = 1;
const R_TOOL = 2;
const R_TOKEN = 4;
const R_INC = 8;
const R_SENT_INC = 16;
const R_SENT = 32;
const R_RECEIVED = 64;
const R_SETTLED = 128;

// Resume presence bits (a varuint after the fact header).
const RS_STATUS = 1;
const RS_INC = 2;
const RS_PREVIOUS_INC = 4;
const RS_ANSWERED_KEY = 8;
const RS_FOUND = 16;
const RS_FOUND_TRUE = 32;
const RS_OUTCOME = 64;
const RS_COUNTED = 128;
const RS_COUNTED_TRUE = 256;

/** The ingest time of the previous fact written or read: most facts of a batch share it. */
interface Cursor {
  ingestMs: number;
}

/**
 * Appends `s` to `w` in format 3 as one record and returns its bytes (a view into the writer's
 * buffer: see {@link ByteWriter}). Exact: {@link decodeBinarySession} gives back an equal state.
 */
export function encodeBinarySession(w: ByteWriter, s: SessionState): Uint8Array {
  w.begin();
  w.u8(BINARY_STATE_FORMAT);
  let flags = 0;
  if (s.stateless) flags |= S_STATELESS;
  if (s.serverService !== undefined) flags |= S_SERVER_SERVICE;
  if (s.clientService !== undefined) flags |= S_CLIENT_SERVICE;
  if (s.pendingSinceMs !== undefined) flags |= S_PENDING;
  if (s.clientBaseline !== undefined) flags |= S_BASELINE;
  const emitted = hasKeys(s.emitted);
  if (emitted) flags |= S_EMITTED;
  w.u8(flags);
  w.str(s.key);
  w.f64(s.lastActivityMs);
  if (s.serverService !== undefined) w.str(s.serverService);
  if (s.clientService !== undefined) w.str(s.clientService);
  if (s.pendingSinceMs !== undefined) w.f64(s.pendingSinceMs);
  if (s.clientBaseline !== undefined) writeBaseline(w, s.clientBaseline);
  const cur: Cursor = { ingestMs: Number.NaN };

  w.varuint(s.created.length);
  for (const c of s.created) {
    const bits = (c.source !== undefined ? 1 : 0) | (c.clientSuppliedId !== undefined ? 2 : 0) | (c.clientSuppliedId === true ? 4 : 0) | (c.lastEventId !== undefined ? 8 : 0);
    writeFact(w, c, bits, cur);
    w.str(c.inc);
    w.str(c.createdBy);
    if (c.source !== undefined) w.str(c.source);
    if (c.lastEventId !== undefined) w.str(c.lastEventId);
  }
  w.varuint(s.ended.length);
  for (const e of s.ended) {
    writeFact(w, e, e.eventsEvicted !== undefined ? 1 : 0, cur);
    w.str(e.inc);
    w.str(e.reason);
    if (e.eventsEvicted !== undefined) w.num(e.eventsEvicted);
  }
  w.varuint(s.events.length);
  let prev: EventFact | undefined;
  for (const e of s.events) {
    writeEvent(w, e, prev, cur);
    prev = e;
  }
  w.varuint(s.resumes.length);
  for (const r of s.resumes) writeResume(w, r, cur);
  w.varuint(s.guardForks.length);
  for (const g of s.guardForks) {
    writeFact(w, g, g.inc !== undefined ? 1 : 0, cur);
    w.str(g.forkKind);
    if (g.inc !== undefined) w.str(g.inc);
  }
  w.varuint(s.requests.size);
  for (const r of s.requests.values()) writeRequest(w, r, cur);
  writeCounts(w, s.eventCounts);
  writeCounts(w, s.droppedEvents);
  let known = 0;
  for (const _ in s.knownIncarnations) known++;
  w.varuint(known);
  for (const inc in s.knownIncarnations) {
    w.str(inc);
    w.str(s.knownIncarnations[inc]!);
  }
  if (emitted) w.str(JSON.stringify(s.emitted));
  return w.end();
}

/**
 * Reads a format-3 state.
 * @throws TypeError when `bytes` is not a well-formed format-3 state.
 */
export function decodeBinarySession(bytes: Uint8Array): SessionState {
  const r = new ByteReader(bytes);
  if (r.u8() !== BINARY_STATE_FORMAT) throw new TypeError('not a binary session state');
  const flags = r.u8();
  const key = r.str();
  const s = newSessionState(key, (flags & S_STATELESS) !== 0, r.f64());
  if (flags & S_SERVER_SERVICE) s.serverService = r.str();
  if (flags & S_CLIENT_SERVICE) s.clientService = r.str();
  if (flags & S_PENDING) s.pendingSinceMs = r.f64();
  if (flags & S_BASELINE) s.clientBaseline = readBaseline(r);
  const cur: Cursor = { ingestMs: Number.NaN };

  for (let n = r.varuint(); n > 0; n--) {
    const h = readFact(r, cur);
    const c: CreatedFact = {
      traceId: h.traceId,
      spanId: h.spanId,
      side: h.side,
      name: SPAN_SESSION_CREATED,
      timeMs: h.timeMs,
      ingestMs: h.ingestMs,
      inc: r.str(),
      source: undefined,
      createdBy: r.str(),
      clientSuppliedId: h.bits & 2 ? (h.bits & 4) !== 0 : undefined,
      lastEventId: undefined,
    };
    if (h.bits & 1) c.source = r.str();
    if (h.bits & 8) c.lastEventId = r.str();
    s.created.push(c);
  }
  for (let n = r.varuint(); n > 0; n--) {
    const h = readFact(r, cur);
    const e: EndedFact = {
      traceId: h.traceId,
      spanId: h.spanId,
      side: h.side,
      name: SPAN_SESSION_ENDED,
      timeMs: h.timeMs,
      ingestMs: h.ingestMs,
      inc: r.str(),
      reason: r.str(),
      eventsEvicted: undefined,
    };
    if (h.bits & 1) e.eventsEvicted = r.num();
    s.ended.push(e);
  }
  let prev: EventFact | undefined;
  for (let n = r.varuint(); n > 0; n--) {
    prev = readEvent(r, prev, cur);
    s.events.push(prev);
  }
  for (let n = r.varuint(); n > 0; n--) s.resumes.push(readResume(r, cur));
  for (let n = r.varuint(); n > 0; n--) {
    const h = readFact(r, cur);
    const g: GuardForkFact = {
      traceId: h.traceId,
      spanId: h.spanId,
      side: h.side,
      name: SPAN_GUARD_FORK,
      timeMs: h.timeMs,
      ingestMs: h.ingestMs,
      forkKind: r.str(),
      inc: undefined,
    };
    if (h.bits & 1) g.inc = r.str();
    s.guardForks.push(g);
  }
  for (let n = r.varuint(); n > 0; n--) {
    const q = readRequest(r, cur);
    s.requests.set(q.requestId, q);
  }
  readCounts(r, s.eventCounts);
  readCounts(r, s.droppedEvents);
  for (let n = r.varuint(); n > 0; n--) setOwn(s.knownIncarnations, r.str(), r.str());
  if (flags & S_EMITTED) {
    const e = JSON.parse(r.str()) as unknown;
    if (typeof e !== 'object' || e === null || Array.isArray(e)) throw new TypeError('malformed emitted findings');
    s.emitted = e as Record<string, EmittedFinding>;
  }
  if (!r.done()) throw new TypeError('trailing bytes after session state');
  return s;
}

// ---- span facts ----

function writeFact(w: ByteWriter, f: SpanFact, bits: number, cur: Cursor): void {
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
interface FactHeader {
  traceId: string;
  spanId: string;
  side: Side;
  timeMs: number;
  ingestMs: number;
  /** The fact kind's presence bits. */
  bits: number;
}

function readFact(r: ByteReader, cur: Cursor): FactHeader {
  const flags = r.u8();
  const side: Side = flags & F_CLIENT ? 'client' : 'server';
  const traceId = r.id();
  const spanId = r.id();
  const timeMs = r.f64();
  if ((flags & F_SAME_INGEST) === 0) cur.ingestMs = r.f64();
  else if (Number.isNaN(cur.ingestMs)) throw new TypeError('malformed span fact');
  return { traceId, spanId, side, timeMs, ingestMs: cur.ingestMs, bits: flags >>> F_SHIFT };
}

function spanFact(h: FactHeader, name: string): SpanFact {
  return { traceId: h.traceId, spanId: h.spanId, side: h.side, name, timeMs: h.timeMs, ingestMs: h.ingestMs };
}

// ---- events: the bulk of a state ----

function writeEvent(w: ByteWriter, e: EventFact, p: EventFact | undefined, cur: Cursor): void {
  writeFact(w, e, 0, cur);
  const at = w.reserveU32();
  let codes = 0;
  codes |= strField(w, e.inc, p?.inc) << (2 * EV_INC);
  if (e.inc !== undefined && e.seq !== undefined && isIncSeq(e.eventId, e.inc, e.seq)) codes |= C_ALT << (2 * EV_ID);
  else codes |= strField(w, e.eventId, p?.eventId) << (2 * EV_ID);
  if (e.seq !== undefined) {
    const ps = p?.seq;
    if (ps !== undefined && e.seq === ps + 1) codes |= C_SAME << (2 * EV_SEQ);
    else if (ps !== undefined && Object.is(e.seq, ps)) codes |= C_ALT << (2 * EV_SEQ);
    else {
      w.num(e.seq);
      codes |= C_VALUE << (2 * EV_SEQ);
    }
  }
  codes |= strField(w, e.seqSource, p?.seqSource) << (2 * EV_SEQ_SOURCE);
  if (e.digest !== undefined && e.digest !== p?.digest && w.hex8(e.digest)) codes |= C_ALT << (2 * EV_DIGEST);
  else codes |= strField(w, e.digest, p?.digest) << (2 * EV_DIGEST);
  codes |= strField(w, e.jsonrpcKind, p?.jsonrpcKind) << (2 * EV_KIND);
  codes |= strField(w, e.jsonrpcId, p?.jsonrpcId) << (2 * EV_RPC_ID);
  codes |= strField(w, e.method, p?.method) << (2 * EV_METHOD);
  codes |= strField(w, e.progressToken, p?.progressToken) << (2 * EV_TOKEN);
  codes |= strField(w, e.stream, p?.stream) << (2 * EV_STREAM);
  codes |= strField(w, e.delivery, p?.delivery) << (2 * EV_DELIVERY);
  codes |= boolCode(e.replayed) << (2 * EV_REPLAYED);
  codes |= boolCode(e.seenBefore) << (2 * EV_SEEN_BEFORE);
  w.patchU32(at, codes);
}

function readEvent(r: ByteReader, p: EventFact | undefined, cur: Cursor): EventFact {
  const fact = readFact(r, cur);
  const codes = r.u32();
  const code = (field: number): number => (codes >>> (2 * field)) & 3;
  const inc = readStr(r, code(EV_INC), p?.inc);
  const idCode = code(EV_ID);
  const eventId = idCode === C_ALT ? undefined : readStr(r, idCode, p?.eventId);
  let seq: number | undefined;
  const seqCode = code(EV_SEQ);
  if (seqCode === C_VALUE) seq = r.num();
  else if (seqCode === C_SAME || seqCode === C_ALT) {
    if (p?.seq === undefined) throw new TypeError('malformed event');
    seq = seqCode === C_SAME ? p.seq + 1 : p.seq;
  }
  const seqSource = readStr(r, code(EV_SEQ_SOURCE), p?.seqSource);
  const digestCode = code(EV_DIGEST);
  const digest = digestCode === C_ALT ? r.hex(8) : readStr(r, digestCode, p?.digest);
  let id = eventId;
  if (idCode === C_ALT) {
    if (inc === undefined || seq === undefined) throw new TypeError('malformed event');
    id = `${inc}-${seq}`;
  }
  if (id === undefined) throw new TypeError('malformed event');
  return {
    traceId: fact.traceId,
    spanId: fact.spanId,
    side: fact.side,
    name: SPAN_SSE_EVENT,
    timeMs: fact.timeMs,
    ingestMs: fact.ingestMs,
    inc,
    eventId: id,
    seq,
    seqSource,
    digest,
    jsonrpcKind: readStr(r, code(EV_KIND), p?.jsonrpcKind),
    jsonrpcId: readStr(r, code(EV_RPC_ID), p?.jsonrpcId),
    method: readStr(r, code(EV_METHOD), p?.method),
    progressToken: readStr(r, code(EV_TOKEN), p?.progressToken),
    stream: readStr(r, code(EV_STREAM), p?.stream),
    replayed: readBool(code(EV_REPLAYED)),
    delivery: readStr(r, code(EV_DELIVERY), p?.delivery),
    seenBefore: readBool(code(EV_SEEN_BEFORE)),
  };
}

/** Writes `v` unless absent or equal to `prev`; returns its code. */
function strField(w: ByteWriter, v: string | undefined, prev: string | undefined): number {
  if (v === undefined) return C_NONE;
  if (v === prev) return C_SAME;
  w.str(v);
  return C_VALUE;
}

function readStr(r: ByteReader, code: number, prev: string | undefined): string | undefined {
  if (code === C_NONE) return undefined;
  if (code === C_VALUE) return r.str();
  if (code === C_SAME && prev !== undefined) return prev;
  throw new TypeError('malformed event');
}

function boolCode(v: boolean | undefined): number {
  return v === undefined ? C_NONE : v ? C_VALUE : C_SAME;
}

function readBool(code: number): boolean | undefined {
  if (code === C_NONE) return undefined;
  if (code === C_ALT) throw new TypeError('malformed event');
  return code === C_VALUE;
}

/** `id === `${inc}-${seq}``, without building the string (this runs for every event written). */
function isIncSeq(id: string, inc: string, seq: number): boolean {
  const n = inc.length;
  const digits = id.length - n - 1;
  if (digits < 1 || digits > 15 || id.charCodeAt(n) !== 45 || !Number.isInteger(seq) || seq < 0) return false;
  if (digits > 1 && id.charCodeAt(n + 1) === 48) return false; // a leading zero is not how seq prints
  let v = 0;
  for (let i = n + 1; i < id.length; i++) {
    const d = id.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return false;
    v = v * 10 + d;
  }
  return v === seq && id.startsWith(inc);
}

// ---- the other facts ----

function writeResume(w: ByteWriter, r: ResumeFact, cur: Cursor): void {
  writeFact(w, r, 0, cur);
  let bits = 0;
  if (r.status !== undefined) bits |= RS_STATUS;
  if (r.inc !== undefined) bits |= RS_INC;
  if (r.previousInc !== undefined) bits |= RS_PREVIOUS_INC;
  if (r.answeredKey !== undefined) bits |= RS_ANSWERED_KEY;
  if (r.found !== undefined) bits |= r.found ? RS_FOUND | RS_FOUND_TRUE : RS_FOUND;
  if (r.outcome !== undefined) bits |= RS_OUTCOME;
  if (r.counted !== undefined) bits |= r.counted ? RS_COUNTED | RS_COUNTED_TRUE : RS_COUNTED;
  w.varuint(bits);
  w.str(r.lastEventId);
  if (r.status !== undefined) w.num(r.status);
  if (r.inc !== undefined) w.str(r.inc);
  if (r.previousInc !== undefined) w.str(r.previousInc);
  if (r.answeredKey !== undefined) w.str(r.answeredKey);
  if (r.outcome !== undefined) w.str(r.outcome);
}

function readResume(r: ByteReader, cur: Cursor): ResumeFact {
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
  };
}

function writeRequest(w: ByteWriter, r: RequestFact, cur: Cursor): void {
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
  if (r.sent !== undefined) writeFact(w, r.sent, 0, cur);
  if (r.received !== undefined) {
    writeFact(w, r.received, r.received.inc !== undefined ? 1 : 0, cur);
    if (r.received.inc !== undefined) w.str(r.received.inc);
  }
  if (r.settled !== undefined) {
    writeFact(w, r.settled, r.settled.outcome !== undefined ? 1 : 0, cur);
    if (r.settled.outcome !== undefined) w.str(r.settled.outcome);
  }
}

function readRequest(r: ByteReader, cur: Cursor): RequestFact {
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
    received: undefined,
    settled: undefined,
  };
  if (bits & R_SENT) q.sent = spanFact(readFact(r, cur), SPAN_REQUEST_SENT);
  if (bits & R_RECEIVED) {
    const h = readFact(r, cur);
    const f = spanFact(h, SPAN_REQUEST_RECEIVED);
    q.received = { traceId: f.traceId, spanId: f.spanId, side: f.side, name: f.name, timeMs: f.timeMs, ingestMs: f.ingestMs, inc: h.bits & 1 ? r.str() : undefined };
  }
  if (bits & R_SETTLED) {
    const h = readFact(r, cur);
    const f = spanFact(h, SPAN_REQUEST_SETTLED);
    q.settled = { traceId: f.traceId, spanId: f.spanId, side: f.side, name: f.name, timeMs: f.timeMs, ingestMs: f.ingestMs, outcome: h.bits & 1 ? r.str() : undefined };
  }
  return q;
}

function writeBaseline(w: ByteWriter, b: ClientBaseline): void {
  w.u8((b.maxSeq !== undefined ? 1 : 0) | (b.inc !== undefined ? 2 : 0) | (b.lastEventId !== undefined ? 4 : 0));
  w.f64(b.timeMs);
  if (b.maxSeq !== undefined) w.num(b.maxSeq);
  if (b.inc !== undefined) w.str(b.inc);
  if (b.lastEventId !== undefined) w.str(b.lastEventId);
}

function readBaseline(r: ByteReader): ClientBaseline {
  const bits = r.u8();
  const b: ClientBaseline = { timeMs: r.f64() };
  if (bits & 1) b.maxSeq = r.num();
  if (bits & 2) b.inc = r.str();
  if (bits & 4) b.lastEventId = r.str();
  return b;
}

function writeCounts(w: ByteWriter, counts: Record<string, number>): void {
  let n = 0;
  for (const _ in counts) n++;
  w.varuint(n);
  for (const k in counts) {
    w.str(k);
    w.num(counts[k]!);
  }
}

function readCounts(r: ByteReader, out: Record<string, number>): void {
  for (let n = r.varuint(); n > 0; n--) setOwn(out, r.str(), r.num());
}

/** A hostile `__proto__` key becomes an own property rather than the object's prototype. */
function setOwn<T>(o: Record<string, T>, k: string, v: T): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}

function hasKeys(o: object): boolean {
  for (const _ in o) return true;
  return false;
}
