import type Database from 'better-sqlite3';

/**
 * Schema migrations, in order. Migration `i` takes the database from `PRAGMA user_version = i`
 * to `i + 1`. Append only: a released migration is never edited, because databases in the
 * field have already run it.
 */
export const MIGRATIONS: readonly string[] = [
  // 1: findings and the engine's per-session state.
  `
  CREATE TABLE findings (
    id             TEXT PRIMARY KEY,
    kind           TEXT NOT NULL,
    service        TEXT NOT NULL,
    session_key    TEXT NOT NULL,
    detected_at_ms INTEGER NOT NULL,
    first_seen_ms  INTEGER NOT NULL,
    resolved_at_ms INTEGER,
    json           TEXT NOT NULL
  );
  -- Cursor paging walks (detected_at_ms DESC, id ASC); each filter gets an index with the
  -- same tail so a filtered page is an index range scan, not a sort.
  CREATE INDEX findings_by_time ON findings (detected_at_ms DESC, id);
  CREATE INDEX findings_by_kind ON findings (kind, detected_at_ms DESC, id);
  CREATE INDEX findings_by_service ON findings (service, detected_at_ms DESC, id);
  CREATE INDEX findings_by_session ON findings (session_key, first_seen_ms);

  CREATE TABLE session_state (
    key        TEXT PRIMARY KEY,
    state      TEXT NOT NULL,
    updated_ms INTEGER NOT NULL
  );
  CREATE INDEX session_state_by_updated ON session_state (updated_ms);
  `,
  // 2: session state keyed by an integer row id the store hands out, not by the session key.
  // Random session keys put every commit's upserts on random pages of a key index, and WAL
  // mode writes each touched page whole: the index was most of the bytes a commit wrote. Rows
  // are now appended or updated in place by id; the store keeps the key -> id map in memory
  // (one store per file). \`state\` has no declared type: JSON text or binary, kept as given.
  `
  CREATE TABLE session_state_v2 (
    id         INTEGER PRIMARY KEY,
    key        TEXT NOT NULL,
    updated_ms INTEGER NOT NULL,
    state      NOT NULL
  );
  INSERT INTO session_state_v2 (key, updated_ms, state) SELECT key, updated_ms, state FROM session_state;
  DROP TABLE session_state;
  ALTER TABLE session_state_v2 RENAME TO session_state;
  CREATE INDEX session_state_by_updated ON session_state (updated_ms);
  `,
  // 3: a log per session. A commit appends what changed in a session (a chunk) instead of
  // rewriting its whole state, which grew with the session; the whole state is rewritten now and
  // then, and the session's chunks deleted with it. \`sid\` is the session_state row's id;
  // \`stamp_ms\` keeps a session with recent chunks from being pruned by its older state row.
  `
  CREATE TABLE session_log (
    id       INTEGER PRIMARY KEY,
    sid      INTEGER NOT NULL,
    stamp_ms INTEGER NOT NULL,
    chunk    BLOB NOT NULL
  );
  CREATE INDEX session_log_by_sid ON session_log (sid);
  `,
  // 4: the lineage kept with a session's findings (JSON of a SessionLineage), written when the
  // correlator compacts or drops a session with findings; deleted with the key's last finding.
  `
  CREATE TABLE session_evidence (
    session_key TEXT PRIMARY KEY,
    updated_ms  INTEGER NOT NULL,
    lineage     TEXT NOT NULL
  );
  `,
];

/** The schema version this build writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Brings `db` up to {@link SCHEMA_VERSION}, each step in its own transaction so a crash
 * mid-migration leaves the previous version intact. Refuses a database written by a newer build
 * rather than guess at its schema.
 */
export function migrate(db: Database.Database): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > SCHEMA_VERSION) {
    throw new Error(`database schema version ${current} is newer than this build's ${SCHEMA_VERSION}`);
  }
  for (let v = current; v < SCHEMA_VERSION; v++) {
    const sql = MIGRATIONS[v]!;
    db.transaction(() => {
      db.exec(sql);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}
