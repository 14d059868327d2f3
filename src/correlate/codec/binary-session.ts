import {
  SPAN_GUARD_FORK,
  SPAN_SESSION_CREATED,
  SPAN_SESSION_ENDED,
} from '@forkwatch/instrumentation/semconv';
import { ByteReader } from '../byte-reader.js';
import type { ByteWriter } from '../byte-writer.js';
import type { CreatedFact, EmittedFinding, EndedFact, EventFact, GuardForkFact, SessionState } from '../session-state.js';
import { newSessionState } from '../session-state.js';
import { readEvent, writeEvent } from './event-record.js';
import { hasKeys, readBaseline, readCounts, readRequest, readResume, setOwn, writeBaseline, writeCounts, writeRequest, writeResume } from './fact-records.js';
import { BINARY_STATE_FORMAT, S_BASELINE, S_CLIENT_SERVICE, S_EMITTED, S_PENDING, S_SERVER_OBSERVER, S_SERVER_SERVICE, S_STATELESS } from './format.js';
import { type Cursor, readFact, writeFact } from './span-fact-record.js';

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
  if (s.serverObserver !== undefined) flags |= S_SERVER_OBSERVER;
  if (s.pendingSinceMs !== undefined) flags |= S_PENDING;
  if (s.clientBaseline !== undefined) flags |= S_BASELINE;
  const emitted = hasKeys(s.emitted);
  if (emitted) flags |= S_EMITTED;
  w.u8(flags);
  w.str(s.key);
  w.f64(s.lastActivityMs);
  if (s.serverService !== undefined) w.str(s.serverService);
  if (s.clientService !== undefined) w.str(s.clientService);
  if (s.serverObserver !== undefined) w.str(s.serverObserver);
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
  if (flags & S_SERVER_OBSERVER) s.serverObserver = r.str();
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
