import { createError } from '../../errors.js';
import type { CompactSession, SessionState } from '../session-state.js';
import { decodeBinarySession } from './binary-session.js';
import { BINARY_STATE_FORMAT } from './format.js';
import { deserializeSession } from './json-session.js';
import { replayLog } from './state-journal.js';

/** One session as a commit stores it: a whole state, deltas to append to its log, or `null` (deleted). */
export interface SavedSession {
  key: string;
  state?: string | Uint8Array | null;
  log?: Uint8Array[];
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
