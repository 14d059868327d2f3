import { createError } from '../../errors.js';
import type { SessionLineage } from '../../model/lineage.js';
import type { CompactSession, SessionState } from '../session-state.js';
import { decodeBinarySession } from './binary-session.js';
import { BINARY_STATE_FORMAT } from './format.js';
import { ByteWriter } from '../byte-writer.js';
import { deserializeSession, serializeSession } from './json-session.js';
import { replayLog, type StateJournal } from './state-journal.js';

/** Bytes of the shared buffer of {@link takeSavedSessions} per session it takes, to begin with. */
const SAVED_BYTES_PER_SESSION = 512;

/** One session as a commit stores it: a whole state, deltas to append to its log, or `null` (deleted). */
export interface SavedSession {
  key: string;
  state?: string | Uint8Array | null;
  log?: Uint8Array[];
  /**
   * The lineage of a session with findings as the correlator held it when it compacted or dropped
   * the session: stored apart from the state (merged with what is stored for the key) and kept as
   * long as the key has findings.
   */
  evidence?: SessionLineage;
}

/** True when `state` is the binary whole-state format (the only one a log of deltas applies to). */
export function isBinaryState(state: string | Uint8Array): state is Uint8Array {
  return typeof state !== 'string' && state[0] === BINARY_STATE_FORMAT;
}

/**
 * A stored session back in memory: its whole state (binary, or the JSON of compacted and older
 * sessions) with the deltas of its log replayed in order.
 * @throws ForkwatchError FORKWATCH_ERR_STORAGE when `state` and `log` are not a saved session.
 */
export function decodeSavedSession(key: string, state: string | Uint8Array, log: readonly Uint8Array[]): SessionState | CompactSession {
  try {
    if (isBinaryState(state)) return replayLog(decodeBinarySession(state), log);
    if (log.length > 0) throw new TypeError('a log of deltas on a state that is not binary');
    return deserializeSession(state);
  } catch (err) {
    throw createError('FORKWATCH_ERR_STORAGE', `cannot restore session ${key.slice(0, 8)}: ${(err as Error).message}`);
  }
}

/**
 * The saved forms of the `dirty` sessions, taken out of `dirty` in its order: for a full session,
 * a delta to append to its log (`log`) or its whole state (`state`, binary format 3, replacing
 * the log: see StateJournal); a compacted one's whole state as JSON; `state: null` when it is in
 * neither map (deleted). At most `max` sessions, and no more once the forms taken reach `maxBytes`
 * (at least one is taken; a JSON state counts its length). The binary forms share one buffer.
 */
export function takeSavedSessions(
  dirty: Set<string>,
  full: ReadonlyMap<string, SessionState>,
  compacted: ReadonlyMap<string, CompactSession>,
  journal: StateJournal,
  max: number,
  maxBytes: number,
): SavedSession[] {
  const out: SavedSession[] = [];
  if (dirty.size === 0) return out;
  // One buffer per call, sized for a new healthy session's whole state (358 B with the real
  // instrumentation's 5 spans; a delta is smaller) and doubled when a call holds larger ones. At
  // 2 KiB a session it was about a megabyte per commit under a stream of new sessions, five
  // times what was written, all of it external memory the GC accounts for.
  const w = new ByteWriter(Math.min(dirty.size, max, 4096) * SAVED_BYTES_PER_SESSION);
  let bytes = 0;
  for (const key of dirty) {
    if (out.length >= max || bytes >= maxBytes) break;
    dirty.delete(key);
    const f = full.get(key);
    if (f !== undefined) {
      const saved = journal.write(w, f);
      if (saved.log === undefined) {
        out.push({ key, state: saved.state });
        bytes += saved.state.length;
      } else {
        out.push({ key, log: [saved.log] });
        bytes += saved.log.length;
      }
      continue;
    }
    const c = compacted.get(key);
    const state = c === undefined ? null : serializeSession(c);
    out.push({ key, state });
    if (state !== null) bytes += state.length;
  }
  return out;
}
