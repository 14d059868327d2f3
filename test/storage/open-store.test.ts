import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadSqlite } from '../../src/storage/sqlite-driver.js';

const Database = loadSqlite();
import { ForkwatchError } from '../../src/errors.js';
import { openStore } from '../../src/storage/open-store.js';
import { MIGRATIONS, SCHEMA_VERSION } from '../../src/storage/migrations.js';
import { makeFinding } from './make-finding.js';

function tempDb(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'forkwatch-store-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'fw.db');
}

test('roundtrip: findings and session state survive close and reopen', (t) => {
  const path = tempDb(t);
  const s1 = openStore({ path, now: () => 5000 });
  const f = makeFinding({ id: 'aaaa000000000001', incarnation: 'i1', newIncarnation: 'i2' });
  s1.commit({ findings: [f], states: [{ key: 'k1', state: '{"a":1}' }, { key: 'k2', state: '{}' }] });
  s1.close();
  s1.close(); // idempotent

  const s2 = openStore({ path });
  t.after(() => s2.close());
  assert.deepEqual(s2.getFinding(f.id), f);
  assert.equal(s2.getFinding('nope'), undefined);
  assert.deepEqual(s2.findingsForSession(f.sessionKey), [f]);
  assert.deepEqual(s2.findingsForSession('other'), []);
  assert.equal(s2.getSessionState('k1'), '{"a":1}');
  assert.deepEqual([...s2.loadSessionStates()].sort((a, b) => a.key.localeCompare(b.key)), [
    { key: 'k1', state: '{"a":1}' },
    { key: 'k2', state: '{}' },
  ]);
  s2.commit({ findings: [], states: [{ key: 'k1', state: null }] });
  assert.equal(s2.getSessionState('k1'), undefined);

  const raw = new Database(path, { readonly: true });
  t.after(() => raw.close());
  assert.equal(raw.pragma('journal_mode', { simple: true }), 'wal');
  assert.equal(raw.pragma('user_version', { simple: true }), SCHEMA_VERSION);
});

test('upsert by id: re-detection merges evidence, keeps first detection, resolution sticks', (t) => {
  const store = openStore({ path: tempDb(t) });
  t.after(() => store.close());
  const first = makeFinding({ id: 'b000000000000001', kind: 'orphaned_progress_token', firstSeenMs: 1500, detectedAtMs: 2000 });
  store.commit({ findings: [first], states: [] });
  store.commit({ findings: [first], states: [] });
  const resolved = { ...first, resolvedAtMs: 9000, detectedAtMs: 8000 };
  store.commit({ findings: [resolved], states: [] });
  const again = {
    ...first,
    firstSeenMs: 900,
    detectedAtMs: 9500,
    summary: 'updated',
    evidence: [{ ...first.evidence[0]!, spanId: 'c'.repeat(16), timeMs: 900, side: 'client' as const }],
  };
  store.commit({ findings: [again], states: [] });

  const page = store.listFindings();
  assert.equal(page.items.length, 1, 'never duplicated');
  const got = store.getFinding(first.id)!;
  assert.equal(got.summary, 'updated');
  assert.equal(got.detectedAtMs, 2000, 'first detection time kept');
  assert.equal(got.firstSeenMs, 900, 'earliest evidence wins');
  assert.equal(got.resolvedAtMs, 9000, 'resolution is not undone by a later unresolved copy');
  assert.deepEqual(got.evidence.map((e) => e.spanId), ['c'.repeat(16), first.evidence[0]!.spanId]);
});

test('listFindings: filters by kind, service, since; limit clamps', (t) => {
  const store = openStore({ path: tempDb(t) });
  t.after(() => store.close());
  const fs = [
    makeFinding({ id: '01', kind: 'minted_on_resume', service: 'a', detectedAtMs: 100 }),
    makeFinding({ id: '02', kind: 'replay_gap', service: 'a', detectedAtMs: 200 }),
    makeFinding({ id: '03', kind: 'orphaned_progress_token', service: 'b', detectedAtMs: 300 }),
    makeFinding({ id: '04', kind: 'minted_on_resume', service: 'b', detectedAtMs: 400 }),
  ];
  store.commit({ findings: fs, states: [] });
  const ids = (q: Parameters<typeof store.listFindings>[0]) => store.listFindings(q).items.map((f) => f.id);
  assert.deepEqual(ids({}), ['04', '03', '02', '01']);
  assert.deepEqual(ids({ kind: ['minted_on_resume'] }), ['04', '01']);
  assert.deepEqual(ids({ kind: ['minted_on_resume', 'replay_gap'] }), ['04', '02', '01']);
  assert.deepEqual(ids({ service: 'b' }), ['04', '03']);
  assert.deepEqual(ids({ since: 200 }), ['04', '03', '02']);
  assert.deepEqual(ids({ kind: ['minted_on_resume'], service: 'a', since: 50 }), ['01']);
  assert.deepEqual(ids({ limit: 0 }), ['04'], 'limit clamps to at least 1');
  assert.throws(() => store.listFindings({ cursor: 'garbage!' }), { code: 'FORKWATCH_ERR_BAD_QUERY' });
  assert.throws(() => store.listFindings({ cursor: Buffer.from('{"x":1}').toString('base64url') }), {
    code: 'FORKWATCH_ERR_BAD_QUERY',
  });
});

test('cursor paging visits each finding once even while newer and equal-time ones are inserted', (t) => {
  const store = openStore({ path: tempDb(t) });
  t.after(() => store.close());
  const initial = Array.from({ length: 25 }, (_, i) =>
    // pairs share a detection time, so the id tie-break is exercised
    makeFinding({ id: `i${String(i).padStart(3, '0')}`, detectedAtMs: 1000 + Math.floor(i / 2) }),
  );
  store.commit({ findings: initial, states: [] });
  const seen: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = store.listFindings({ limit: 4, ...(cursor ? { cursor } : {}) });
    seen.push(...page.items.map((f) => f.id));
    cursor = page.nextCursor;
    // newer findings arrive while the client pages
    store.commit({ findings: [makeFinding({ id: `new${pages}`, detectedAtMs: 5000 + pages })], states: [] });
    pages++;
  } while (cursor && pages < 50);
  assert.equal(pages, 7);
  assert.deepEqual(seen, [...initial].reverse().sort((a, b) => b.detectedAtMs - a.detectedAtMs || a.id.localeCompare(b.id)).map((f) => f.id));
  assert.equal(new Set(seen).size, 25);
});

test('prune deletes findings and idle session states older than retention', (t) => {
  let clock = 1_000;
  const store = openStore({ path: tempDb(t), retentionMs: 10_000, now: () => clock });
  t.after(() => store.close());
  store.commit({
    findings: [makeFinding({ id: 'old', detectedAtMs: 1_000 }), makeFinding({ id: 'new', detectedAtMs: 15_000 })],
    states: [{ key: 'idle', state: '{}' }],
  });
  clock = 15_000;
  store.commit({ findings: [], states: [{ key: 'busy', state: '{}' }] });
  assert.deepEqual(store.prune(20_000), { findings: 1, states: 1 });
  assert.equal(store.getFinding('old'), undefined);
  assert.ok(store.getFinding('new'));
  assert.equal(store.getSessionState('idle'), undefined);
  assert.equal(store.getSessionState('busy'), '{}');
});

test('a write that cannot get the lock fails with FORKWATCH_ERR_STORAGE, writes nothing, and a retry succeeds', (t) => {
  const path = tempDb(t);
  const store = openStore({ path, busyTimeoutMs: 20 });
  t.after(() => store.close());
  const other = new Database(path);
  other.exec('BEGIN IMMEDIATE');
  const batch = { findings: [makeFinding({ id: 'locked' })], states: [{ key: 'x', state: '1' }] };
  assert.throws(
    () => store.commit(batch),
    (e: unknown) => e instanceof ForkwatchError && e.code === 'FORKWATCH_ERR_STORAGE' && /commit/.test(e.message),
  );
  other.exec('ROLLBACK');
  other.close();
  assert.equal(store.getFinding('locked'), undefined);
  store.commit(batch);
  assert.ok(store.getFinding('locked'));
  assert.equal(store.getSessionState('x'), '1');
});

test('opening a path that cannot be created fails with FORKWATCH_ERR_STORAGE', () => {
  assert.throws(() => openStore({ path: join(tmpdir(), 'no-such-dir-fw', 'x', 'fw.db') }), {
    code: 'FORKWATCH_ERR_STORAGE',
  });
});

test(':memory: works', () => {
  const store = openStore({ path: ':memory:' });
  store.commit({ findings: [makeFinding({ id: 'm' })], states: [] });
  assert.ok(store.getFinding('m'));
  store.close();
});

test('a process killed with SIGKILL mid-commits loses no commit that returned', { timeout: 30_000 }, async (t) => {
  const path = tempDb(t);
  const child = spawn(
    process.execPath,
    ['--conditions=forkwatch-source', '--import', 'tsx', fileURLToPath(new URL('./commit-loop.child.ts', import.meta.url)), path],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  t.after(() => child.kill('SIGKILL'));
  let lastAcked = -1;
  // The last commit the child printed, read to the end after the kill: the child runs ahead of
  // what the parent has read, by as much as the pipe holds.
  let lastPrinted = -1;
  let buf = '';
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_c, sig) => resolve(sig)));
  const drained = new Promise<void>((resolve) => child.stdout!.on('end', resolve));
  await new Promise<void>((resolve, reject) => {
    child.on('exit', () => reject(new Error('child exited before it was killed')));
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split('\n');
      buf = lines.pop()!;
      for (const l of lines) lastPrinted = Number(l);
      if (lastAcked < 0 && lastPrinted >= 300) {
        lastAcked = lastPrinted;
        child.kill('SIGKILL');
        resolve();
      }
    });
  });
  assert.equal(await exited, 'SIGKILL');
  await drained;
  assert.ok(lastAcked >= 300);

  const store = openStore({ path });
  t.after(() => store.close());
  for (let n = 0; n <= lastPrinted; n++) {
    assert.ok(store.getFinding(`f${n}`), `commit ${n} returned before the kill and must be durable`);
  }
  // The key's latest state is that of a commit that returned (or of the one the kill cut short
  // between its return and its line), never older.
  const state = JSON.parse(String(store.getSessionState(`s${lastAcked % 50}`))) as { n: number };
  assert.equal(state.n % 50, lastAcked % 50);
  assert.ok(state.n >= lastAcked && state.n <= lastPrinted + 1, `state of commit ${state.n}, printed up to ${lastPrinted}`);
});

test('a schema-1 database (state keyed by session key) opens, migrates, and keeps its states', (t) => {
  const path = tempDb(t);
  const v1 = new Database(path);
  v1.pragma('journal_mode = WAL');
  v1.exec(MIGRATIONS[0]!);
  v1.pragma('user_version = 1');
  v1.prepare('INSERT INTO session_state (key, state, updated_ms) VALUES (?, ?, ?)').run('old', '{"v":1}', 1000);
  v1.close();

  const store = openStore({ path, now: () => 2000 });
  assert.equal(store.getSessionState('old'), '{"v":1}');
  store.commit({ findings: [], states: [{ key: 'old', state: Buffer.from([3, 1, 2]) }, { key: 'new', state: '{}' }] });
  assert.deepEqual(store.getSessionState('old'), Buffer.from([3, 1, 2]));
  store.close();

  const again = openStore({ path });
  t.after(() => again.close());
  assert.deepEqual([...again.loadSessionStates()].map((r) => r.key).sort(), ['new', 'old']);
  assert.equal(again.prune(1000 + 30 * 24 * 3600 * 1000 + 1500).states, 2);
  assert.equal(again.getSessionState('old'), undefined);
  const raw = new Database(path, { readonly: true });
  t.after(() => raw.close());
  assert.equal(raw.pragma('user_version', { simple: true }), SCHEMA_VERSION);
});

test('session state rows: an upsert updates in place, a delete frees the key, a failed commit hands out no id', (t) => {
  const path = tempDb(t);
  const store = openStore({ path, busyTimeoutMs: 20 });
  t.after(() => store.close());
  store.commit({ findings: [], states: [{ key: 'a', state: '1' }, { key: 'b', state: '2' }, { key: 'a', state: '3' }] });
  assert.equal(store.getSessionState('a'), '3', 'the last change of a key in one commit wins');
  store.commit({ findings: [], states: [{ key: 'a', state: '4' }, { key: 'b', state: null }] });
  assert.equal(store.getSessionState('a'), '4');
  assert.equal(store.getSessionState('b'), undefined);
  const other = new Database(path);
  other.exec('BEGIN IMMEDIATE');
  assert.throws(() => store.commit({ findings: [], states: [{ key: 'c', state: '5' }, { key: 'a', state: null }] }), { code: 'FORKWATCH_ERR_STORAGE' });
  other.exec('ROLLBACK');
  other.close();
  assert.equal(store.getSessionState('c'), undefined);
  assert.equal(store.getSessionState('a'), '4', 'the rolled-back delete did not forget the row');
  store.commit({ findings: [], states: [{ key: 'c', state: '6' }, { key: 'b', state: '7' }] });
  assert.deepEqual([...store.loadSessionStates()], [
    { key: 'a', state: '4' },
    { key: 'c', state: '6' },
    { key: 'b', state: '7' },
  ]);
  const raw = new Database(path, { readonly: true });
  t.after(() => raw.close());
  assert.equal((raw.prepare('SELECT count(*) AS n FROM session_state').get() as { n: number }).n, 3, 'one row per key');
});

test('session state rows stay one per key when another store writes the same file', (t) => {
  const path = tempDb(t);
  const a = openStore({ path });
  const b = openStore({ path });
  t.after(() => {
    a.close();
    b.close();
  });
  a.commit({ findings: [], states: [{ key: 'k', state: 'a1' }] });
  b.commit({ findings: [], states: [{ key: 'k', state: 'b1' }, { key: 'j', state: 'b1' }] });
  a.commit({ findings: [], states: [{ key: 'k', state: 'a2' }, { key: 'j', state: null }] });
  assert.equal(b.getSessionState('k'), 'a2');
  assert.equal(b.getSessionState('j'), undefined);
  assert.deepEqual([...b.loadSessionStates()], [{ key: 'k', state: 'a2' }]);
});

test('the SQLite driver matches the running Node: better-sqlite3 12 below Node 22, 13 (Node-API) from 22', async () => {
  const { createRequire } = await import('node:module');
  const require = createRequire(import.meta.url);
  assert.equal(loadSqlite('20.20.2'), require('better-sqlite3'));
  assert.equal(loadSqlite('24.21.0'), require('better-sqlite3-napi'));
  const major = Number(process.versions.node.split('.')[0]);
  assert.equal(Database, major >= 22 ? require('better-sqlite3-napi') : require('better-sqlite3'));
});
