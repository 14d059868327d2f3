import type BetterSqlite3 from 'better-sqlite3';
import { loadSqlite } from './sqlite-driver.js';
import { ForkwatchError, createError } from '../errors.js';
import type { Finding } from '../model/finding.js';
import type { SessionLineage } from '../model/lineage.js';
import { DEFAULT_KEPT_LINEAGE_BOUNDS, mergeLineages, storableLineage } from '../correlate/kept-lineage.js';
import { decodeFindingsCursor, encodeFindingsCursor } from './findings-cursor.js';
import { mergeFinding } from './merge-finding.js';
import { migrate } from './migrations.js';
import { SessionStateRows } from './session-state-rows.js';
import {
  DEFAULT_PAGE_SIZE,
  DEFAULT_RETENTION_MS,
  MAX_PAGE_SIZE,
  type FindingsPage,
  type ListFindingsQuery,
  type Store,
  type StoreCommit,
} from './store.js';

/** better-sqlite3 as the running Node needs it (see sqlite-driver.ts). */
const Database = loadSqlite();

export interface OpenStoreOptions {
  /** SQLite file path, or ':memory:'. */
  path: string;
  /** Age past which {@link Store.prune} deletes findings and idle session state; default 30 days, ms. */
  retentionMs?: number;
  /** How long a write waits for another connection's lock before failing; default 5000 ms. */
  busyTimeoutMs?: number;
  /** Clock stamping session-state updates, epoch ms; default `Date.now`. */
  now?: () => number;
  /** Events in a lineage kept with a session's findings (`--max-kept-events`); default 200. */
  maxKeptEvents?: number;
}

/** Default {@link OpenStoreOptions.busyTimeoutMs}. */
export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

interface FindingRow {
  detected_at_ms: number;
  id: string;
  json: string;
}

/**
 * Opens (creating and migrating as needed) the detector's SQLite store. WAL with
 * `synchronous=NORMAL`: a commit that returned survives a process crash (kill -9); only an OS
 * crash or power loss can take the last few. Throws FORKWATCH_ERR_STORAGE when the file cannot
 * be opened or migrated.
 */
export function openStore(options: OpenStoreOptions): Store {
  const retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
  const now = options.now ?? Date.now;
  const db = guard('open', () => {
    const d = new Database(options.path);
    try {
      d.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS))}`);
      d.pragma('journal_mode = WAL');
      d.pragma('synchronous = NORMAL');
      d.pragma('foreign_keys = ON');
      migrate(d);
      return d;
    } catch (e) {
      d.close();
      throw e;
    }
  });

  const stmt = {
    getFinding: db.prepare<[string], { json: string }>('SELECT json FROM findings WHERE id = ?'),
    upsertFinding: db.prepare(
      `INSERT INTO findings (id, kind, service, session_key, detected_at_ms, first_seen_ms, resolved_at_ms, json)
       VALUES (@id, @kind, @service, @sessionKey, @detectedAtMs, @firstSeenMs, @resolvedAtMs, @json)
       ON CONFLICT (id) DO UPDATE SET
         kind = excluded.kind, service = excluded.service, session_key = excluded.session_key,
         detected_at_ms = excluded.detected_at_ms, first_seen_ms = excluded.first_seen_ms,
         resolved_at_ms = excluded.resolved_at_ms, json = excluded.json`,
    ),
    forSession: db.prepare<[string, number], { json: string }>(
      'SELECT json FROM findings WHERE session_key = ? ORDER BY first_seen_ms, id LIMIT ?',
    ),
    pruneFindings: db.prepare<[number]>('DELETE FROM findings WHERE detected_at_ms < ?'),
    getEvidence: db.prepare<[string], { lineage: string }>('SELECT lineage FROM session_evidence WHERE session_key = ?'),
    putEvidence: db.prepare<[string, number, string]>(
      `INSERT INTO session_evidence (session_key, updated_ms, lineage) VALUES (?, ?, ?)
       ON CONFLICT (session_key) DO UPDATE SET updated_ms = excluded.updated_ms, lineage = excluded.lineage`,
    ),
    pruneEvidence: db.prepare(
      'DELETE FROM session_evidence WHERE NOT EXISTS (SELECT 1 FROM findings WHERE findings.session_key = session_evidence.session_key)',
    ),
  };
  const bounds = { ...DEFAULT_KEPT_LINEAGE_BOUNDS, ...(options.maxKeptEvents !== undefined ? { maxEvents: options.maxKeptEvents } : {}) };
  const keepEvidence = (key: string, l: SessionLineage, stampMs: number): void => {
    // The spans the session's findings cite are the last events the bound cuts.
    const cited = new Set<string>();
    for (const r of stmt.forSession.all(key, MAX_PAGE_SIZE)) for (const e of (JSON.parse(r.json) as Finding).evidence) cited.add(e.spanId);
    const row = stmt.getEvidence.get(key);
    const merged = mergeLineages(row ? (JSON.parse(row.lineage) as SessionLineage) : { ...l, incarnations: [], events: [], resumes: [], requests: [], findingIds: [] }, storableLineage(l), bounds, cited);
    stmt.putEvidence.run(key, stampMs, JSON.stringify(merged));
  };
  const states = guard('open', () => {
    try {
      return new SessionStateRows(db);
    } catch (e) {
      db.close();
      throw e;
    }
  });
  // One prepared statement per filter shape; at most 2^3 shapes times the distinct kind counts.
  const listStatements = new Map<string, BetterSqlite3.Statement<unknown[], FindingRow>>();

  const commitTx = db.transaction((batch: StoreCommit, stampMs: number): Map<string, number | undefined> => {
    for (const f of batch.findings) {
      const row = stmt.getFinding.get(f.id);
      const merged = row ? mergeFinding(JSON.parse(row.json) as Finding, f) : f;
      stmt.upsertFinding.run({
        id: merged.id,
        kind: merged.kind,
        service: merged.service,
        sessionKey: merged.sessionKey,
        detectedAtMs: Math.floor(merged.detectedAtMs),
        firstSeenMs: Math.floor(merged.firstSeenMs),
        resolvedAtMs: merged.resolvedAtMs === undefined ? null : Math.floor(merged.resolvedAtMs),
        json: JSON.stringify(merged),
      });
    }
    for (const c of batch.states) if (c.evidence !== undefined) keepEvidence(c.key, c.evidence, stampMs);
    return states.write(batch.states, stampMs);
  });

  let closed = false;

  return {
    commit(batch) {
      if (batch.findings.length === 0 && batch.states.length === 0) return;
      // IMMEDIATE: the write lock from the start, which SessionStateRows.write relies on.
      states.apply(guard('commit', () => commitTx.immediate(batch, Math.floor(now()))));
    },

    listFindings(query: ListFindingsQuery = {}): FindingsPage {
      const limit = Math.min(MAX_PAGE_SIZE, Math.max(1, Math.floor(query.limit ?? DEFAULT_PAGE_SIZE)));
      const after = query.cursor === undefined ? undefined : decodeFindingsCursor(query.cursor);
      const kinds = [...new Set(query.kind ?? [])];
      const where: string[] = [];
      const params: unknown[] = [];
      if (kinds.length > 0) {
        where.push(`kind IN (${kinds.map(() => '?').join(',')})`);
        params.push(...kinds);
      }
      if (query.service !== undefined) {
        where.push('service = ?');
        params.push(query.service);
      }
      if (query.since !== undefined) {
        where.push('detected_at_ms >= ?');
        params.push(Math.ceil(query.since));
      }
      if (after) {
        where.push('(detected_at_ms < ? OR (detected_at_ms = ? AND id > ?))');
        params.push(after.detectedAtMs, after.detectedAtMs, after.id);
      }
      const sql =
        'SELECT detected_at_ms, id, json FROM findings' +
        (where.length ? ` WHERE ${where.join(' AND ')}` : '') +
        ' ORDER BY detected_at_ms DESC, id ASC LIMIT ?';
      params.push(limit + 1);
      return guard('list findings', () => {
        let s = listStatements.get(sql);
        if (!s) {
          s = db.prepare<unknown[], FindingRow>(sql);
          listStatements.set(sql, s);
        }
        const rows = s.all(...params);
        const more = rows.length > limit;
        const page = more ? rows.slice(0, limit) : rows;
        const out: FindingsPage = { items: page.map((r) => JSON.parse(r.json) as Finding) };
        const last = page[page.length - 1];
        if (more && last) out.nextCursor = encodeFindingsCursor({ detectedAtMs: last.detected_at_ms, id: last.id });
        return out;
      });
    },

    getFinding(id) {
      return guard('get finding', () => {
        const row = stmt.getFinding.get(id);
        return row ? (JSON.parse(row.json) as Finding) : undefined;
      });
    },

    findingsForSession(key) {
      return guard('findings for session', () =>
        stmt.forSession.all(key, MAX_PAGE_SIZE).map((r) => JSON.parse(r.json) as Finding),
      );
    },

    loadSessionStates() {
      // Materialised rather than iterated: better-sqlite3 forbids writes on a connection while
      // a statement iterates, and the engine bounds the number of sessions anyway.
      return guard('load session states', () => states.all());
    },

    getSessionState(key) {
      return guard('get session state', () => states.get(key));
    },

    getSessionEvidence(key) {
      return guard('get session evidence', () => {
        const row = stmt.getEvidence.get(key);
        return row ? (JSON.parse(row.lineage) as SessionLineage) : undefined;
      });
    },

    getSessionLog(key) {
      return guard('get session log', () => states.log(key));
    },

    prune(nowMs) {
      const cutoff = Math.floor(nowMs - retentionMs);
      const pruned = guard('prune', () =>
        db.transaction(() => ({
          findings: stmt.pruneFindings.run(cutoff).changes,
          rows: states.prune(cutoff),
          evidence: stmt.pruneEvidence.run().changes,
        }))(),
      );
      states.forget(pruned.rows);
      return { findings: pruned.findings, states: pruned.rows.length };
    },

    checkpoint() {
      if (closed || db.memory) return;
      guard('checkpoint', () => db.pragma('wal_checkpoint(TRUNCATE)'));
    },

    close() {
      if (closed) return;
      closed = true;
      guard('close', () => {
        try {
          if (db.memory === false) db.pragma('wal_checkpoint(TRUNCATE)');
        } finally {
          db.close();
        }
      });
    },
  };
}

/** Runs `fn`, turning any SQLite failure into FORKWATCH_ERR_STORAGE with the cause attached. */
function guard<T>(what: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof ForkwatchError) throw e;
    const err = createError('FORKWATCH_ERR_STORAGE', `${what}: ${e instanceof Error ? e.message : String(e)}`);
    err.cause = e;
    throw err;
  }
}
