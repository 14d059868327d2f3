import { SPAN_GUARD_FORK, SPAN_SESSION_CREATED, SPAN_SESSION_ENDED } from '@forkwatch/instrumentation/semconv';
import type { ByteReader } from '../byte-reader.js';
import type { ByteWriter } from '../byte-writer.js';
import type { CreatedFact, EndedFact, GuardForkFact, ResumeFact, SessionState } from '../session-state.js';
import { readBaseline, readResume, setOwn, writeBaseline, writeResume } from './fact-records.js';
import { S_BASELINE, S_CLIENT_SERVICE, S_PENDING, S_SERVER_OBSERVER, S_SERVER_SERVICE, S_STATELESS } from './format.js';
import { type Cursor, readFact, writeFact } from './span-fact-record.js';

// The parts of format 3 that a full state (binary-session.ts) and a delta (session-delta.ts)
// write alike: the session's scalar fields and its short lists, each written whole.

/** The flags of `s`'s scalar fields (S_*), without S_EMITTED. */
export function headFlags(s: SessionState): number {
  let flags = 0;
  if (s.stateless) flags |= S_STATELESS;
  if (s.serverService !== undefined) flags |= S_SERVER_SERVICE;
  if (s.clientService !== undefined) flags |= S_CLIENT_SERVICE;
  if (s.serverObserver !== undefined) flags |= S_SERVER_OBSERVER;
  if (s.pendingSinceMs !== undefined) flags |= S_PENDING;
  if (s.clientBaseline !== undefined) flags |= S_BASELINE;
  return flags;
}

/** The scalar fields after the key, as `flags` announced them. */
export function writeHeadFields(w: ByteWriter, s: SessionState): void {
  w.f64(s.lastActivityMs);
  if (s.serverService !== undefined) w.str(s.serverService);
  if (s.clientService !== undefined) w.str(s.clientService);
  if (s.serverObserver !== undefined) w.str(s.serverObserver);
  if (s.pendingSinceMs !== undefined) w.f64(s.pendingSinceMs);
  if (s.clientBaseline !== undefined) writeBaseline(w, s.clientBaseline);
}

/** Reads what {@link writeHeadFields} wrote (after lastActivityMs) into `s`; an absent field is deleted. */
export function readHeadFields(r: ByteReader, s: SessionState, flags: number): void {
  if (flags & S_SERVER_SERVICE) s.serverService = r.str();
  else delete s.serverService;
  if (flags & S_CLIENT_SERVICE) s.clientService = r.str();
  else delete s.clientService;
  if (flags & S_SERVER_OBSERVER) s.serverObserver = r.str();
  else delete s.serverObserver;
  if (flags & S_PENDING) s.pendingSinceMs = r.f64();
  else delete s.pendingSinceMs;
  if (flags & S_BASELINE) s.clientBaseline = readBaseline(r);
  else delete s.clientBaseline;
}

export function writeCreatedList(w: ByteWriter, list: CreatedFact[], cur: Cursor): void {
  w.varuint(list.length);
  for (const c of list) {
    const bits = (c.source !== undefined ? 1 : 0) | (c.clientSuppliedId !== undefined ? 2 : 0) | (c.clientSuppliedId === true ? 4 : 0) | (c.lastEventId !== undefined ? 8 : 0);
    writeFact(w, c.side, c.traceId, c.spanId, c.timeMs, c.ingestMs, bits, cur);
    w.str(c.inc);
    w.str(c.createdBy);
    if (c.source !== undefined) w.str(c.source);
    if (c.lastEventId !== undefined) w.str(c.lastEventId);
  }
}

export function readCreatedList(r: ByteReader, cur: Cursor): CreatedFact[] {
  const out: CreatedFact[] = [];
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
    out.push(c);
  }
  return out;
}

export function writeEndedList(w: ByteWriter, list: EndedFact[], cur: Cursor): void {
  w.varuint(list.length);
  for (const e of list) {
    writeFact(w, e.side, e.traceId, e.spanId, e.timeMs, e.ingestMs, e.eventsEvicted !== undefined ? 1 : 0, cur);
    w.str(e.inc);
    w.str(e.reason);
    if (e.eventsEvicted !== undefined) w.num(e.eventsEvicted);
  }
}

export function readEndedList(r: ByteReader, cur: Cursor): EndedFact[] {
  const out: EndedFact[] = [];
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
    out.push(e);
  }
  return out;
}

export function writeResumeList(w: ByteWriter, list: ResumeFact[], cur: Cursor): void {
  w.varuint(list.length);
  for (const x of list) writeResume(w, x, cur);
}

export function readResumeList(r: ByteReader, cur: Cursor): ResumeFact[] {
  const out: ResumeFact[] = [];
  for (let n = r.varuint(); n > 0; n--) out.push(readResume(r, cur));
  return out;
}

export function writeGuardForkList(w: ByteWriter, list: GuardForkFact[], cur: Cursor): void {
  w.varuint(list.length);
  for (const g of list) {
    writeFact(w, g.side, g.traceId, g.spanId, g.timeMs, g.ingestMs, g.inc !== undefined ? 1 : 0, cur);
    w.str(g.forkKind);
    if (g.inc !== undefined) w.str(g.inc);
  }
}

export function readGuardForkList(r: ByteReader, cur: Cursor): GuardForkFact[] {
  const out: GuardForkFact[] = [];
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
    out.push(g);
  }
  return out;
}

export function writeKnown(w: ByteWriter, known: Record<string, string>): void {
  let n = 0;
  for (const _ in known) n++;
  w.varuint(n);
  for (const inc in known) {
    w.str(inc);
    w.str(known[inc]!);
  }
}

export function readKnown(r: ByteReader, out: Record<string, string>): void {
  for (let n = r.varuint(); n > 0; n--) setOwn(out, r.str(), r.str());
}
