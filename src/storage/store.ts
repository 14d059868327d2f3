import type { Finding, FindingKind } from '../model/finding.js';
import type { SessionLineage } from '../model/lineage.js';

/**
 * A saved engine session: text (JSON formats) or bytes (binary format). SQLite keeps either in
 * the same column (TEXT affinity stores a BLOB as is) and gives back what was written.
 */
export type SessionStateData = string | Uint8Array;

/**
 * One engine session-state change. `state` replaces the key's whole state and drops its log;
 * `state: null` deletes the key (and its log); `log` appends chunks to the key's log, after
 * `state` when both are given. A change with only `log` needs the key stored already: the
 * store keeps no log without a state (such chunks are skipped).
 */
export interface SessionStateChange {
  key: string;
  state?: SessionStateData | null;
  log?: Uint8Array[];
  /**
   * The session's lineage as the correlator held it when it compacted or dropped a session with
   * findings: merged with the lineage stored for the key, bounded (see boundLineage, the spans
   * its findings cite kept first), and kept while the key has findings, whatever `state` says.
   */
  evidence?: SessionLineage;
}

/** A stored session: its whole state and the chunks appended to its log since, oldest first (absent when none). */
export interface StoredSessionState {
  key: string;
  state: SessionStateData;
  log?: Uint8Array[];
}

/** What one {@link Store.commit} writes, atomically. */
export interface StoreCommit {
  findings: Finding[];
  states: SessionStateChange[];
}

/** Filters and paging for {@link Store.listFindings}. */
export interface ListFindingsQuery {
  /** Any of these kinds; all kinds when absent or empty. */
  kind?: FindingKind[];
  service?: string;
  /** Only findings detected at or after this time, epoch ms. */
  since?: number;
  /** Page size; default {@link DEFAULT_PAGE_SIZE}, clamped to 1..{@link MAX_PAGE_SIZE}. */
  limit?: number;
  /** Opaque cursor from a previous page's `nextCursor`. */
  cursor?: string;
}

export interface FindingsPage {
  /** Newest detection first. */
  items: Finding[];
  /** Present when more items may follow. */
  nextCursor?: string;
}

/** Default page size of {@link Store.listFindings}. */
export const DEFAULT_PAGE_SIZE = 100;
/** Largest page {@link Store.listFindings} returns. */
export const MAX_PAGE_SIZE = 1000;
/** Default retention of findings and idle session state: 30 days, in ms. */
export const DEFAULT_RETENTION_MS = 30 * 24 * 3600 * 1000;

/**
 * Durable findings and engine session state. Every method throws FORKWATCH_ERR_STORAGE when
 * SQLite fails; a failed commit wrote nothing, so the caller keeps its data and retries.
 */
export interface Store {
  /** Writes all findings (upserted by id) and state changes in one transaction. */
  commit(batch: StoreCommit): void;
  /** Throws FORKWATCH_ERR_BAD_QUERY for a malformed cursor. */
  listFindings(query?: ListFindingsQuery): FindingsPage;
  getFinding(id: string): Finding | undefined;
  /** Findings of one session key, oldest first, at most {@link MAX_PAGE_SIZE}. */
  findingsForSession(key: string): Finding[];
  /** Every stored session state with its log, to rebuild the engine at startup. */
  loadSessionStates(): Iterable<StoredSessionState>;
  /** The whole state last written for `key` (without its log). */
  getSessionState(key: string): SessionStateData | undefined;
  /** The lineage kept with `key`'s findings (see {@link SessionStateChange.evidence}), if any. */
  getSessionEvidence(key: string): SessionLineage | undefined;
  /** The chunks appended to `key`'s log since its whole state was written, oldest first. */
  getSessionLog(key: string): Uint8Array[];
  /**
   * Deletes findings detected and session states last updated more than the retention ago, and
   * the kept lineages of keys left without findings.
   */
  prune(nowMs: number): { findings: number; states: number };
  /**
   * Copies the WAL into the main file and truncates it (`wal_checkpoint(TRUNCATE)`), giving its
   * space back to the file system: after a full disk, the WAL keeps freed space until this runs.
   * @throws ForkwatchError FORKWATCH_ERR_STORAGE when SQLite fails.
   */
  checkpoint(): void;
  /** Checkpoints the WAL into the main file and closes; idempotent. */
  close(): void;
}
