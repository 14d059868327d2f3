import type { ByteWriter } from '../byte-writer.js';
import type { RequestFact, SessionState } from '../session-state.js';
import { encodeBinarySession } from './binary-session.js';
import { type DeltaMark, applySessionDelta, encodeSessionDelta, setMark } from './session-delta.js';

/** Deltas a session's log holds at most; the next write is then the whole state. */
export const MAX_LOG_CHUNKS = 64;

/** How a touched session is saved: the whole state (which replaces its log), or one delta appended to its log. */
export type SessionWrite = { state: Uint8Array; log?: undefined } | { state?: undefined; log: Uint8Array };

interface JournalMark extends DeltaMark {
  /** The session object the mark was made for: a new object under the same key starts whole. */
  session: SessionState;
  generation: number;
  /** Bytes of the whole state last written, and of the deltas appended to it since. */
  baseBytes: number;
  logBytes: number;
  chunks: number;
}

/**
 * Decides, for each touched session, whether to append a delta to its log or rewrite its whole
 * state, and keeps what the next delta is written against. A commit used to rewrite every
 * touched session whole, so a long-lived session cost more per span the longer it lived; a
 * delta costs what changed. The whole state is written for a session's first save (and after a
 * restart, unless its saved form was read back here), once its log reaches
 * {@link MAX_LOG_CHUNKS} deltas or as many bytes as the state it applies to (so reading back
 * costs at most twice the state), and when no delta can say what changed.
 */
export class StateJournal {
  /**
   * By session key, dropped by {@link forget}. A WeakMap keyed by the session object held the
   * marks before: under churn (a detector evicting tens of thousands of sessions a second) its
   * table filled with dead keys until the collector ran, and each growth rehashed it whole, on
   * the commit's path: a lag run's profile spent ~1 s of its ~12 s of CPU in `WeakMap.set`, in
   * stretches of 100-200 ms that held the event loop (2026-12-07).
   */
  private readonly marks = new Map<string, JournalMark>();
  private generation = 0;

  /** Marks held: one per session written or restored since and not forgotten. */
  get size(): number {
    return this.marks.size;
  }

  private mark(s: SessionState): JournalMark | undefined {
    const m = this.marks.get(s.key);
    return m !== undefined && m.session === s ? m : undefined;
  }

  /** Encodes `s` into `w` as a delta or whole. */
  write(w: ByteWriter, s: SessionState): SessionWrite {
    const m = this.mark(s);
    if (m !== undefined && m.generation === this.generation && m.chunks < MAX_LOG_CHUNKS && m.logBytes < m.baseBytes) {
      const log = encodeSessionDelta(w, s, m);
      if (log !== undefined) {
        m.chunks++;
        m.logBytes += log.length;
        return { log };
      }
    }
    const state = encodeBinarySession(w, s);
    if (m === undefined) this.marks.set(s.key, newMark(s, this.generation, state.length, 0, 0));
    else resetMark(m, s, this.generation, state.length, 0, 0);
    return { state };
  }

  /** A span added request `r` to `s` (`added`) or completed it: the next delta carries it. */
  request(s: SessionState, r: RequestFact, added: boolean): void {
    const m = this.mark(s);
    if (m === undefined) return;
    if (added) (m.added ??= []).push(r);
    else (m.completed ??= []).push(r);
  }

  /** A decision was reported on `s`, or one of its orphans resolved: its resumes and emitted findings may have changed. */
  analysed(s: SessionState): void {
    const m = this.mark(s);
    if (m !== undefined) m.analysed = true;
  }

  /**
   * `s` was rebuilt from its saved form: `base` (a format-3 state) and the deltas of `log`
   * applied in order. Deltas continue from it.
   */
  restored(s: SessionState, base: Uint8Array, log: readonly Uint8Array[]): void {
    let logBytes = 0;
    for (const c of log) logBytes += c.length;
    this.marks.set(s.key, newMark(s, this.generation, base.length, logBytes, log.length));
  }

  /** The session under `key` left memory (dropped, expired or compacted): its mark goes with it. */
  forget(key: string): void {
    this.marks.delete(key);
  }

  /** Forgets every mark: each session's next write is whole. */
  reset(): void {
    this.generation++;
  }
}

// Marks are built and reset field by field: a spread of the mark's fields per whole write was the
// costliest line of encoding in a profile of the wire benchmark's payloads (each session's first
// save is whole), and gave the marks no stable shape.
function newMark(s: SessionState, generation: number, baseBytes: number, logBytes: number, chunks: number): JournalMark {
  const m: JournalMark = {
    session: s,
    events: 0,
    lastEvent: undefined,
    createdN: 0,
    createdFirst: undefined,
    createdLast: undefined,
    endedN: 0,
    endedFirst: undefined,
    endedLast: undefined,
    resumesN: 0,
    resumesFirst: undefined,
    resumesLast: undefined,
    guardForksN: 0,
    guardForksFirst: undefined,
    guardForksLast: undefined,
    added: undefined,
    completed: undefined,
    analysed: false,
    generation,
    baseBytes,
    logBytes,
    chunks,
  };
  setMark(m, s);
  return m;
}

function resetMark(m: JournalMark, s: SessionState, generation: number, baseBytes: number, logBytes: number, chunks: number): void {
  m.session = s;
  setMark(m, s);
  m.generation = generation;
  m.baseBytes = baseBytes;
  m.logBytes = logBytes;
  m.chunks = chunks;
}

/** A format-3 state with its log's deltas applied in order. */
export function replayLog(s: SessionState, log: readonly Uint8Array[]): SessionState {
  for (const c of log) applySessionDelta(s, c);
  return s;
}
