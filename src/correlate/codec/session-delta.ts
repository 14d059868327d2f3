import { ByteReader } from '../byte-reader.js';
import type { ByteWriter } from '../byte-writer.js';
import type { EventFact, RequestFact, SessionState } from '../session-state.js';
import { NO_COUNTS, ownCounts } from '../session-state.js';
import { hasKeys, readCounts, readRequest, setOwn, writeCounts, writeRequest } from './fact-records.js';
import { readEmitted, readEvents, writeEvents } from './binary-session.js';
import { BINARY_DELTA_FORMAT, D_CREATED, D_EMITTED, D_ENDED, D_GUARD_FORKS, D_KNOWN, D_RESUMES } from './format.js';
import {
  headFlags,
  readCreatedList,
  readEndedList,
  readGuardForkList,
  readHeadFields,
  readKnown,
  readResumeList,
  writeCreatedList,
  writeEndedList,
  writeGuardForkList,
  writeHeadFields,
  writeKnown,
  writeResumeList,
} from './list-records.js';
import type { Cursor } from './span-fact-record.js';

/**
 * What a session's state was when it was last written (full or delta), as far as the next delta
 * needs it, and what the engine changed since that a look at the state cannot tell. Events and
 * the short lists only ever change as the engine changes them: appended at the end, the oldest
 * dropped; a list counts as changed when its length or either end differs. Requests are also
 * completed in place: the engine lists each request a span added or completed
 * ({@link DeltaMark.added}, {@link DeltaMark.completed}). Resumes and emitted findings change when
 * a decision is reported, which the engine tells ({@link DeltaMark.analysed}).
 *
 * Flat, one object per session: every written session keeps its mark for as long as it is
 * tracked, and a healthy session is written once, so nested list marks and two empty arrays per
 * mark were a fifth of its heap and objects the young generation's scavenges copied.
 */
export interface DeltaMark {
  /** s.events.length and its last event. */
  events: number;
  lastEvent: EventFact | undefined;
  createdN: number;
  createdFirst: object | undefined;
  createdLast: object | undefined;
  endedN: number;
  endedFirst: object | undefined;
  endedLast: object | undefined;
  resumesN: number;
  resumesFirst: object | undefined;
  resumesLast: object | undefined;
  guardForksN: number;
  guardForksFirst: object | undefined;
  guardForksLast: object | undefined;
  /** Requests added since, in the order they were added (undefined: none). */
  added: RequestFact[] | undefined;
  /** Requests that were there before and were completed since (duplicates allowed; undefined: none). */
  completed: RequestFact[] | undefined;
  /** A decision was reported (or an orphan resolved) since: resumes and emitted may have changed. */
  analysed: boolean;
}

/** Sets `m` to `s` as it is now, field by field (one shape for every mark). */
export function setMark(m: DeltaMark, s: SessionState): void {
  const { created, ended, resumes, guardForks } = s;
  m.events = s.events.length;
  m.lastEvent = s.events[s.events.length - 1];
  m.createdN = created.length;
  m.createdFirst = created[0];
  m.createdLast = created[created.length - 1];
  m.endedN = ended.length;
  m.endedFirst = ended[0];
  m.endedLast = ended[ended.length - 1];
  m.resumesN = resumes.length;
  m.resumesFirst = resumes[0];
  m.resumesLast = resumes[resumes.length - 1];
  m.guardForksN = guardForks.length;
  m.guardForksFirst = guardForks[0];
  m.guardForksLast = guardForks[guardForks.length - 1];
  m.added = undefined;
  m.completed = undefined;
  m.analysed = false;
}

function listChanged(list: readonly object[], n: number, first: object | undefined, last: object | undefined): boolean {
  return list.length !== n || list[0] !== first || list[list.length - 1] !== last;
}

/**
 * Appends to `w` (format 4) what changed in `s` since `mark`, updates `mark` to now and returns
 * the bytes; or returns undefined, writing nothing, when no delta can say it (the newest event
 * written before was dropped since): then write the whole state. {@link applySessionDelta} on the
 * state as it was at `mark` gives back a state that encodes exactly as `s` does.
 */
export function encodeSessionDelta(w: ByteWriter, s: SessionState, mark: DeltaMark): Uint8Array | undefined {
  // Events written before that are still kept: everything up to the newest of them (older ones
  // of a full incarnation may have been dropped since, the oldest first).
  const ev = s.events;
  let kept = 0;
  if (mark.events > 0) {
    let i = Math.min(mark.events, ev.length) - 1;
    while (i >= 0 && ev[i] !== mark.lastEvent) i--;
    if (i < 0) return undefined;
    kept = i + 1;
  }
  w.begin();
  w.u8(BINARY_DELTA_FORMAT);
  w.u8(headFlags(s));
  writeHeadFields(w, s);
  let parts = 0;
  if (listChanged(s.created, mark.createdN, mark.createdFirst, mark.createdLast)) parts |= D_CREATED | D_KNOWN; // a created fact trimmed away moves to knownIncarnations
  if (listChanged(s.ended, mark.endedN, mark.endedFirst, mark.endedLast)) parts |= D_ENDED;
  if (mark.analysed || listChanged(s.resumes, mark.resumesN, mark.resumesFirst, mark.resumesLast)) parts |= D_RESUMES;
  if (listChanged(s.guardForks, mark.guardForksN, mark.guardForksFirst, mark.guardForksLast)) parts |= D_GUARD_FORKS;
  if (mark.analysed && hasKeys(s.emitted)) parts |= D_EMITTED;
  w.u8(parts);
  const cur: Cursor = { ingestMs: Number.NaN };
  if (parts & D_CREATED) writeCreatedList(w, s.created, cur);
  if (parts & D_ENDED) writeEndedList(w, s.ended, cur);
  if (parts & D_RESUMES) writeResumeList(w, s.resumes, cur);
  if (parts & D_GUARD_FORKS) writeGuardForkList(w, s.guardForks, cur);
  if (parts & D_KNOWN) writeKnown(w, s.knownIncarnations);
  // The counts come before the events: the reader works out from them which old events were dropped.
  writeCounts(w, s.eventCounts);
  writeCounts(w, s.droppedEvents);
  w.varuint(mark.events - kept);
  writeEvents(w, ev, kept, kept > 0 ? ev[kept - 1] : undefined, cur);
  writeRequests(w, s, mark, cur);
  if (parts & D_EMITTED) w.str(JSON.stringify(s.emitted));
  setMark(mark, s);
  return w.end();
}

/**
 * The requests map's size, then each request completed since the mark (flag 0), then each
 * added since (flag 1, in the order added). A request added and dropped again since is written
 * too: the reader drops it again when it cuts the map to its size.
 */
function writeRequests(w: ByteWriter, s: SessionState, mark: DeltaMark, cur: Cursor): void {
  w.varuint(s.requests.size);
  const at = w.reserveU32();
  let n = 0;
  const { added, completed } = mark;
  if (completed !== undefined) {
    // Each once, and not when added since too (written below).
    const seen = new Set<RequestFact>(added);
    for (const r of completed) {
      if (seen.has(r) || s.requests.get(r.requestId) !== r) continue;
      seen.add(r);
      w.u8(0);
      writeRequest(w, r, cur);
      n++;
    }
  }
  if (added !== undefined) {
    for (const r of added) {
      w.u8(1);
      writeRequest(w, r, cur);
      n++;
    }
  }
  w.patchU32(at, n);
}

/**
 * Applies a delta of {@link encodeSessionDelta} to the state it was written against (mutating it).
 * @throws TypeError when `bytes` is not a well-formed delta of that state.
 */
export function applySessionDelta(s: SessionState, bytes: Uint8Array): void {
  const r = new ByteReader(bytes);
  if (r.u8() !== BINARY_DELTA_FORMAT) throw new TypeError('not a session state delta');
  const flags = r.u8();
  s.lastActivityMs = r.f64();
  readHeadFields(r, s, flags);
  const parts = r.u8();
  const cur: Cursor = { ingestMs: Number.NaN };
  if (parts & D_CREATED) s.created = readCreatedList(r, cur);
  if (parts & D_ENDED) s.ended = readEndedList(r, cur);
  if (parts & D_RESUMES) s.resumes = readResumeList(r, cur);
  if (parts & D_GUARD_FORKS) s.guardForks = readGuardForkList(r, cur);
  if (parts & D_KNOWN) readKnown(r, (s.knownIncarnations = {}));
  const counts: Record<string, number> = {};
  readCounts(r, counts);
  const droppedCounts: Record<string, number> = {};
  readCounts(r, droppedCounts);
  const dropped = r.varuint();
  const tail: EventFact[] = [];
  readEvents(r, tail, s.events[s.events.length - 1], cur);
  if (dropped > 0) s.events = dropOldest(s.events, tail, counts, dropped);
  for (const e of tail) s.events.push(e);
  // Counts are written into the record the state already has: eventCounts is kept in
  // dictionary mode for the hot path (session-state.ts keyedRecord); none stays the shared empty one.
  if (hasKeys(counts)) s.eventCounts = ownCounts(s.eventCounts);
  for (const k in s.eventCounts) delete s.eventCounts[k];
  for (const k in counts) setOwn(s.eventCounts, k, counts[k]!);
  s.droppedEvents = hasKeys(droppedCounts) ? droppedCounts : NO_COUNTS;
  const size = r.varuint();
  for (let n = r.u32(); n > 0; n--) {
    const added = r.u8() === 1;
    const q = readRequest(r, cur);
    if (added) s.requests.delete(q.requestId);
    s.requests.set(q.requestId, q);
  }
  for (const id of s.requests.keys()) {
    if (s.requests.size <= size) break;
    s.requests.delete(id);
  }
  if (parts & D_EMITTED) s.emitted = readEmitted(r);
  if (!r.done()) throw new TypeError('trailing bytes after session state delta');
}

/**
 * `events` without the `dropped` oldest events the engine dropped since: per `${side}:${inc}`,
 * the oldest go first, and `counts` (eventCounts after the delta) says how many of each stay,
 * `tail` (the events the delta adds) included.
 */
function dropOldest(events: EventFact[], tail: EventFact[], counts: Record<string, number>, dropped: number): EventFact[] {
  const have = new Map<string, number>();
  for (const e of events) have.set(bucketOf(e), (have.get(bucketOf(e)) ?? 0) + 1);
  for (const e of tail) have.set(bucketOf(e), (have.get(bucketOf(e)) ?? 0) + 1);
  const excess = new Map<string, number>();
  let total = 0;
  for (const [b, n] of have) {
    const k = n - (Object.hasOwn(counts, b) ? counts[b]! : 0);
    if (k > 0) {
      excess.set(b, k);
      total += k;
    }
  }
  if (total !== dropped) throw new TypeError('session state delta drops events the state does not have');
  const out: EventFact[] = [];
  for (const e of events) {
    const b = bucketOf(e);
    const k = excess.get(b);
    if (k !== undefined && k > 0) excess.set(b, k - 1);
    else out.push(e);
  }
  for (const k of excess.values()) if (k !== 0) throw new TypeError('session state delta drops events the state does not have');
  return out;
}

function bucketOf(e: EventFact): string {
  return `${e.side}:${e.inc ?? ''}`;
}
