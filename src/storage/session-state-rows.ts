import type BetterSqlite3 from 'better-sqlite3';
import type { SessionStateChange, SessionStateData, StoredSessionState } from './store.js';

/** Rows per multi-row INSERT, largest first; every count is made of these (the last is 1). */
const INSERT_SIZES = [64, 16, 4, 1] as const;
const INSERT_COLUMNS = 4;

/**
 * The `session_state` rows (schema 2) and their logs (`session_log`, schema 3): one row per session key, addressed by an integer id
 * this class hands out and remembers (key -> id, loaded at open). A commit appends new sessions
 * and updates known ones in place by id, without a key index whose random pages every commit
 * would rewrite. Should another connection write the file (a second detector pointed at it by
 * mistake, an overlapping restart), the map is reloaded before the next write: SQLite's
 * data_version tells.
 */
export class SessionStateRows {
  private readonly ids = new Map<string, number>();
  private readonly loadIds: BetterSqlite3.Statement<[], { id: number; key: string }>;
  private readonly dataVersion: BetterSqlite3.Statement<[], number>;
  /** data_version when the map was last known to match the table. */
  private version: number;
  private readonly db: BetterSqlite3.Database;
  /** Multi-row inserts with explicit ids, by rows per statement ({@link INSERT_SIZES}), prepared when first used. */
  private readonly inserts = new Map<number, BetterSqlite3.Statement<unknown[]>>();
  private readonly maxId: BetterSqlite3.Statement<[], number | null>;
  private readonly update: BetterSqlite3.Statement<[number, SessionStateData, number]>;
  private readonly remove: BetterSqlite3.Statement<[number]>;
  private readonly getOne: BetterSqlite3.Statement<[number], { state: SessionStateData }>;
  private readonly getAll: BetterSqlite3.Statement<[], { id: number; key: string; state: SessionStateData }>;
  private readonly pruneOld: BetterSqlite3.Statement<[number, number], { key: string; id: number }>;
  private readonly appendLog: BetterSqlite3.Statement<[number, number, Uint8Array]>;
  private readonly dropLog: BetterSqlite3.Statement<[number]>;
  private readonly getLog: BetterSqlite3.Statement<[number], { chunk: Uint8Array }>;
  private readonly getAllLogs: BetterSqlite3.Statement<[], { sid: number; chunk: Uint8Array }>;

  constructor(db: BetterSqlite3.Database) {
    this.db = db;
    this.maxId = db.prepare<[], number | null>('SELECT max(id) FROM session_state').pluck();
    this.update = db.prepare('UPDATE session_state SET updated_ms = ?, state = ? WHERE id = ?');
    this.remove = db.prepare('DELETE FROM session_state WHERE id = ?');
    this.getOne = db.prepare('SELECT state FROM session_state WHERE id = ?');
    // In id order: were a key ever stored twice, the newest row would be restored last and win.
    this.getAll = db.prepare('SELECT id, key, state FROM session_state ORDER BY id');
    // A session whose state row is old but whose log has recent chunks is active: kept.
    this.pruneOld = db.prepare(
      'DELETE FROM session_state WHERE updated_ms < ? AND NOT EXISTS (SELECT 1 FROM session_log WHERE sid = session_state.id AND stamp_ms >= ?) RETURNING key, id',
    );
    this.appendLog = db.prepare('INSERT INTO session_log (sid, stamp_ms, chunk) VALUES (?, ?, ?)');
    this.dropLog = db.prepare('DELETE FROM session_log WHERE sid = ?');
    this.getLog = db.prepare('SELECT chunk FROM session_log WHERE sid = ? ORDER BY id');
    this.getAllLogs = db.prepare('SELECT sid, chunk FROM session_log ORDER BY id');
    this.loadIds = db.prepare('SELECT id, key FROM session_state ORDER BY id');
    this.dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
    this.version = this.dataVersion.get()!;
    this.reload();
  }

  /**
   * Writes `changes` inside the caller's transaction, which must hold the write lock from its
   * start (BEGIN IMMEDIATE), so that no other writer can slip in after the check below. Returns
   * the key -> id changes to {@link apply} once that transaction committed (a rolled-back
   * insert's id means nothing).
   */
  write(changes: SessionStateChange[], stampMs: number): Map<string, number | undefined> {
    this.syncWithOtherWriters();
    const made = new Map<string, number | undefined>();
    // New sessions (most of a commit's states under a stream of new sessions) are inserted a
    // batch at a time, one statement per INSERT_SIZES rows, their ids given here: a statement
    // per row was most of SQLite's CPU. The ids are what SQLite would give (max + 1 onward, in
    // order); the caller's transaction holds the write lock, so no other writer takes them.
    const batch: unknown[] = [];
    let nextId = 0;
    for (const c of changes) {
      let id = made.has(c.key) ? made.get(c.key) : this.ids.get(c.key);
      // A key inserted earlier in this call (listed twice): its row must exist before it changes.
      if (batch.length > 0 && made.has(c.key)) this.insertRows(batch);
      if (c.state === null) {
        if (id !== undefined) {
          this.remove.run(id);
          this.dropLog.run(id);
          made.set(c.key, undefined);
          id = undefined;
        }
      } else if (c.state !== undefined) {
        if (id !== undefined) {
          this.update.run(stampMs, c.state, id);
          this.dropLog.run(id);
        } else {
          if (nextId === 0) nextId = (this.maxId.get() ?? 0) + 1;
          id = nextId++;
          batch.push(id, c.key, stampMs, c.state);
          made.set(c.key, id);
        }
      }
      if (c.log === undefined) continue;
      // Chunks without a state to apply to cannot be read back. The engine writes a session's
      // whole state before its first chunk, so only another writer deleting the row (two
      // detectors on one file) gets here; the session's next whole state heals it.
      if (id !== undefined) for (const chunk of c.log) this.appendLog.run(id, stampMs, chunk);
    }
    if (batch.length > 0) this.insertRows(batch);
    return made;
  }

  /** Inserts the rows of `batch` (id, key, updated_ms, state each), in order, and empties it. */
  private insertRows(batch: unknown[]): void {
    let at = 0;
    for (const size of INSERT_SIZES) {
      const n = size * INSERT_COLUMNS;
      if (batch.length - at < n) continue;
      let stmt = this.inserts.get(size);
      if (stmt === undefined) {
        stmt = this.db.prepare<unknown[]>(`INSERT INTO session_state (id, key, updated_ms, state) VALUES ${new Array<string>(size).fill('(?, ?, ?, ?)').join(', ')}`);
        this.inserts.set(size, stmt);
      }
      for (; batch.length - at >= n; at += n) stmt.run(at === 0 && batch.length === n ? batch : batch.slice(at, at + n));
    }
    batch.length = 0;
  }

  /** Records what a committed {@link write} did. */
  apply(made: Map<string, number | undefined>): void {
    for (const [key, id] of made) {
      if (id === undefined) this.ids.delete(key);
      else this.ids.set(key, id);
    }
  }

  get(key: string): SessionStateData | undefined {
    this.syncWithOtherWriters();
    const id = this.ids.get(key);
    return id === undefined ? undefined : this.getOne.get(id)?.state;
  }

  log(key: string): Uint8Array[] {
    this.syncWithOtherWriters();
    const id = this.ids.get(key);
    return id === undefined ? [] : this.getLog.all(id).map((r) => r.chunk);
  }

  all(): StoredSessionState[] {
    const logs = new Map<number, Uint8Array[]>();
    for (const r of this.getAllLogs.iterate()) {
      const l = logs.get(r.sid);
      if (l === undefined) logs.set(r.sid, [r.chunk]);
      else l.push(r.chunk);
    }
    return this.getAll.all().map((r) => {
      const log = logs.get(r.id);
      return log === undefined ? { key: r.key, state: r.state } : { key: r.key, state: r.state, log };
    });
  }

  /**
   * Deletes rows last updated before `cutoffMs` whose log has no chunk since, with their logs
   * (inside the caller's transaction); returns them.
   */
  prune(cutoffMs: number): Array<{ key: string; id: number }> {
    const gone = this.pruneOld.all(cutoffMs, cutoffMs);
    for (const r of gone) this.dropLog.run(r.id);
    return gone;
  }

  /** Reloads the key -> id map when another connection committed since it was last known right. */
  private syncWithOtherWriters(): void {
    const v = this.dataVersion.get()!;
    if (v === this.version) return;
    this.version = v;
    this.reload();
  }

  private reload(): void {
    this.ids.clear();
    for (const r of this.loadIds.all()) this.ids.set(r.key, r.id);
  }

  /** Forgets pruned rows once their transaction committed. */
  forget(rows: Array<{ key: string; id: number }>): void {
    for (const r of rows) if (this.ids.get(r.key) === r.id) this.ids.delete(r.key);
  }
}
