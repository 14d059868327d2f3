import { SPAN_SSE_EVENT } from '@forkwatch/instrumentation/semconv';
import type { ByteReader } from '../byte-reader.js';
import type { ByteWriter } from '../byte-writer.js';
import type { EventFact } from '../session-state.js';
import { C_ALT, C_NONE, C_SAME, C_VALUE, EV_DELIVERY, EV_DIGEST, EV_ID, EV_INC, EV_KIND, EV_METHOD, EV_REPLAYED, EV_RPC_ID, EV_SEEN_BEFORE, EV_SEQ, EV_SEQ_SOURCE, EV_STREAM, EV_TOKEN } from './format.js';
import { type Cursor, readFact, writeFact } from './span-fact-record.js';

// Events are the bulk of a state: each field is a 2-bit code against the previous event (format.ts).
export function writeEvent(w: ByteWriter, e: EventFact, p: EventFact | undefined, cur: Cursor): void {
  writeFact(w, e.side, e.traceId, e.spanId, e.timeMs, e.ingestMs, 0, cur);
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

export function readEvent(r: ByteReader, p: EventFact | undefined, cur: Cursor): EventFact {
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
