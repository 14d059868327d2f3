import { ByteReader } from '../byte-reader.js';
import type { ByteWriter } from '../byte-writer.js';
import type { EmittedFinding, EventFact, SessionState } from '../session-state.js';
import { newSessionState } from '../session-state.js';
import { readEvent, writeEvent } from './event-record.js';
import { hasKeys, readBaseline, readCounts, readRequest, writeCounts, writeRequest } from './fact-records.js';
import { BINARY_STATE_FORMAT, S_BASELINE, S_CLIENT_SERVICE, S_EMITTED, S_PENDING, S_SERVER_OBSERVER, S_SERVER_SERVICE, S_STATELESS } from './format.js';
import { headFlags, readCreatedList, readEndedList, readGuardForkList, readKnown, readResumeList, writeCreatedList, writeEndedList, writeGuardForkList, writeHeadFields, writeKnown, writeResumeList } from './list-records.js';
import type { Cursor } from './span-fact-record.js';

/**
 * Appends `s` to `w` in format 3 as one record and returns its bytes (a view into the writer's
 * buffer: see {@link ByteWriter}). Exact: {@link decodeBinarySession} gives back an equal state.
 */
export function encodeBinarySession(w: ByteWriter, s: SessionState): Uint8Array {
  w.begin();
  w.u8(BINARY_STATE_FORMAT);
  const emitted = hasKeys(s.emitted);
  w.u8(headFlags(s) | (emitted ? S_EMITTED : 0));
  w.str(s.key);
  writeHeadFields(w, s);
  const cur: Cursor = { ingestMs: Number.NaN };
  writeCreatedList(w, s.created, cur);
  writeEndedList(w, s.ended, cur);
  writeEvents(w, s.events, 0, undefined, cur);
  writeResumeList(w, s.resumes, cur);
  writeGuardForkList(w, s.guardForks, cur);
  w.varuint(s.requests.size);
  for (const r of s.requests.values()) writeRequest(w, r, cur);
  writeCounts(w, s.eventCounts);
  writeCounts(w, s.droppedEvents);
  writeKnown(w, s.knownIncarnations);
  if (emitted) w.str(JSON.stringify(s.emitted));
  return w.end();
}

/** Writes `events` from index `from` as a count and records, each against the one before (`prev` for the first). */
export function writeEvents(w: ByteWriter, events: EventFact[], from: number, prev: EventFact | undefined, cur: Cursor): void {
  w.varuint(events.length - from);
  for (let i = from; i < events.length; i++) {
    const e = events[i]!;
    writeEvent(w, e, prev, cur);
    prev = e;
  }
}

/** Reads what {@link writeEvents} wrote, appending to `out`; `prev` as it was written with. */
export function readEvents(r: ByteReader, out: EventFact[], prev: EventFact | undefined, cur: Cursor): void {
  for (let n = r.varuint(); n > 0; n--) {
    prev = readEvent(r, prev, cur);
    out.push(prev);
  }
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
  s.created = readCreatedList(r, cur);
  s.ended = readEndedList(r, cur);
  readEvents(r, s.events, undefined, cur);
  s.resumes = readResumeList(r, cur);
  s.guardForks = readGuardForkList(r, cur);
  for (let n = r.varuint(); n > 0; n--) {
    const q = readRequest(r, cur);
    s.requests.set(q.requestId, q);
  }
  s.eventCounts = readCounts(r, s.eventCounts);
  s.droppedEvents = readCounts(r, s.droppedEvents);
  readKnown(r, s.knownIncarnations);
  if (flags & S_EMITTED) s.emitted = readEmitted(r);
  if (!r.done()) throw new TypeError('trailing bytes after session state');
  return s;
}

/** The emitted findings, kept as JSON: rare, and they hold whole findings. */
export function readEmitted(r: ByteReader): Record<string, EmittedFinding> {
  const e = JSON.parse(r.str()) as unknown;
  if (typeof e !== 'object' || e === null || Array.isArray(e)) throw new TypeError('malformed emitted findings');
  return e as Record<string, EmittedFinding>;
}
