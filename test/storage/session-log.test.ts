import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ByteWriter } from '../../src/correlate/byte-writer.js';
import { decodeBinarySession, encodeBinarySession } from '../../src/correlate/codec/binary-session.js';
import { CorrelationEngine } from '../../src/correlate/correlation-engine.js';
import type { SessionState } from '../../src/correlate/session-state.js';
import { deserializeSession, serializeSession } from '../../src/correlate/codec/json-session.js';
import type { SpanRecord } from '../../src/model/span-record.js';
import { MIGRATIONS, SCHEMA_VERSION } from '../../src/storage/migrations.js';
import { openStore } from '../../src/storage/open-store.js';
import { loadSqlite } from '../../src/storage/sqlite-driver.js';
import { healthyResumeScenario } from '../fixtures/scenarios/scenarios.js';
import { stateHash } from './session-log.child.js';

const Database = loadSqlite();

function tempDb(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'forkwatch-log-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'fw.db');
}

const b = (...xs: number[]): Buffer => Buffer.from(xs);

function logRows(path: string): number {
  const raw = new Database(path, { readonly: true });
  try {
    return (raw.prepare('SELECT count(*) AS n FROM session_log').get() as { n: number }).n;
  } finally {
    raw.close();
  }
}

test('chunks appended to a state are read back after it, in order, after reopening', (t) => {
  const path = tempDb(t);
  const s1 = openStore({ path });
  s1.commit({ findings: [], states: [{ key: 'a', state: b(3, 0) }, { key: 'z', state: '{}' }] });
  s1.commit({ findings: [], states: [{ key: 'a', log: [b(4, 1)] }] });
  s1.commit({ findings: [], states: [{ key: 'a', log: [b(4, 2), b(4, 3)] }] });
  assert.deepEqual(s1.getSessionLog('a'), [b(4, 1), b(4, 2), b(4, 3)]);
  s1.close();
  const s2 = openStore({ path });
  t.after(() => s2.close());
  assert.deepEqual([...s2.loadSessionStates()], [
    { key: 'a', state: b(3, 0), log: [b(4, 1), b(4, 2), b(4, 3)] },
    { key: 'z', state: '{}' },
  ]);
  assert.deepEqual(s2.getSessionState('a'), b(3, 0));
  assert.deepEqual(s2.getSessionLog('z'), []);
  assert.deepEqual(s2.getSessionLog('nope'), []);
});

test('a whole state replaces the log (compaction); a deletion takes the log with it', (t) => {
  const path = tempDb(t);
  const store = openStore({ path });
  t.after(() => store.close());
  store.commit({ findings: [], states: [{ key: 'a', state: b(3, 0) }, { key: 'b', state: b(3, 9) }] });
  store.commit({ findings: [], states: [{ key: 'a', log: [b(4, 1)] }, { key: 'b', log: [b(4, 8)] }] });
  store.commit({ findings: [], states: [{ key: 'a', state: b(3, 1), log: [b(4, 2)] }, { key: 'b', state: null }] });
  assert.deepEqual([...store.loadSessionStates()], [{ key: 'a', state: b(3, 1), log: [b(4, 2)] }]);
  assert.equal(logRows(path), 1, 'the replaced and the deleted logs are gone');
  // A later key reusing the deleted row's id starts without a log.
  store.commit({ findings: [], states: [{ key: 'c', state: b(3, 7) }] });
  assert.deepEqual(store.getSessionLog('c'), []);
});

test('chunks for a key without a state are not kept', (t) => {
  const store = openStore({ path: tempDb(t) });
  t.after(() => store.close());
  store.commit({ findings: [], states: [{ key: 'ghost', log: [b(4, 1)] }] });
  assert.deepEqual([...store.loadSessionStates()], []);
});

test('prune keeps a session whose log has recent chunks, and deletes an idle one with its log', (t) => {
  let clock = 1_000;
  const path = tempDb(t);
  const store = openStore({ path, retentionMs: 10_000, now: () => clock });
  t.after(() => store.close());
  store.commit({ findings: [], states: [{ key: 'busy', state: b(3, 1) }, { key: 'idle', state: b(3, 2) }] });
  store.commit({ findings: [], states: [{ key: 'idle', log: [b(4, 2)] }] });
  clock = 15_000;
  store.commit({ findings: [], states: [{ key: 'busy', log: [b(4, 1)] }] });
  assert.equal(store.prune(20_000).states, 1);
  assert.deepEqual([...store.loadSessionStates()], [{ key: 'busy', state: b(3, 1), log: [b(4, 1)] }]);
  assert.equal(logRows(path), 1);
});

test('a schema-2 file with format-3 and JSON states (no log table) opens, migrates, restores and takes deltas', (t) => {
  const path = tempDb(t);
  // States as the build before schema 3 wrote them: whole, one row per session.
  const binary = readFileSync(new URL('../fixtures/session-state/format3-healthy.bin', import.meta.url));
  const json = serializeSession(decodeBinarySession(readFileSync(new URL('../fixtures/session-state/format3-seed.bin', import.meta.url))));
  const keys = [decodeBinarySession(binary).key, (deserializeSession(json) as SessionState).key];
  const v2 = new Database(path);
  v2.pragma('journal_mode = WAL');
  v2.exec(MIGRATIONS[0]!);
  v2.exec(MIGRATIONS[1]!);
  v2.pragma('user_version = 2');
  const insert = v2.prepare('INSERT INTO session_state (key, updated_ms, state) VALUES (?, ?, ?)');
  insert.run(keys[0], 1000, binary);
  insert.run(keys[1], 1000, json);
  v2.close();

  const store = openStore({ path });
  t.after(() => store.close());
  const loaded = [...store.loadSessionStates()];
  assert.deepEqual(loaded.map((r) => [r.key, r.log]), [[keys[0], undefined], [keys[1], undefined]]);
  let now = 1_900_000_100_000;
  const engine = new CorrelationEngine({ now: () => now });
  for (const r of loaded) engine.restore(r.key, r.state, r.log);
  const full = (engine as unknown as { full: Map<string, SessionState> }).full;
  const enc = (s: SessionState): Buffer => Buffer.from(encodeBinarySession(new ByteWriter(), s));
  assert.deepEqual(enc(full.get(keys[0]!)!), enc(decodeBinarySession(binary)));
  assert.deepEqual(enc(full.get(keys[1]!)!), enc(deserializeSession(json) as SessionState));
  // The binary state is continued with a delta; the JSON one is rewritten whole.
  const more = (key: string, n: number): SpanRecord[] =>
    healthyResumeScenario({ sessionId: 'more' })
      .client.slice(2, 6)
      .map((s, i) => ({ ...s, spanId: (n + i).toString(16).padStart(16, '0'), attributes: { ...s.attributes, 'forkwatch.session.key': key } }));
  now += 100;
  engine.ingest([...more(keys[0]!, 1), ...more(keys[1]!, 100)]);
  const changes = engine.takeDirty();
  assert.deepEqual(changes.map((c) => [c.key, c.log !== undefined ? 'delta' : 'whole']), [[keys[0], 'delta'], [keys[1], 'whole']]);
  store.commit({ findings: [], states: changes });
  const again = new CorrelationEngine({ now: () => now });
  for (const r of store.loadSessionStates()) again.restore(r.key, r.state, r.log);
  assert.equal(stateHash(again), stateHash(engine));
  const raw = new Database(path, { readonly: true });
  t.after(() => raw.close());
  assert.equal(raw.pragma('user_version', { simple: true }), SCHEMA_VERSION);
});

test('killed with SIGKILL between appends and compactions, a real file gives back the last acknowledged states', { timeout: 60_000 }, async (t) => {
  const path = tempDb(t);
  const child = spawn(process.execPath, ['--conditions=forkwatch-source', '--import', 'tsx', fileURLToPath(new URL('./session-log.child.ts', import.meta.url)), path], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  t.after(() => child.kill('SIGKILL'));
  const pre = new Map<number, { hash: string; logs: number }>();
  let acked = -1;
  let buf = '';
  // Past several compactions of each session (MAX_LOG_CHUNKS deltas), at a point that varies with
  // the machine. The child commits one step per byte it is sent, so the kill lands in commit
  // `acked + 1` or after it. Where every session's log was just compacted there are no deltas to
  // replay (the child's schedule has such commits, e.g. 650): the kill is sent where at least two
  // sessions hold deltas and no tick comes next, so one does after either commit.
  const killAt = 600 + Math.floor(Math.random() * 200);
  let killed = false;
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_c, sig) => resolve(sig)));
  const drained = new Promise<void>((resolve) => child.stdout!.on('end', resolve));
  child.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    const lines = buf.split('\n');
    buf = lines.pop()!;
    for (const l of lines) {
      const [what, n, hash, logs] = l.split(' ');
      if (what === 'pre') pre.set(Number(n), { hash: hash!, logs: Number(logs) });
      else if (!killed) {
        acked = Number(n);
        const next = acked + 1;
        child.stdin!.write('g');
        if (acked >= killAt && pre.get(acked)!.logs >= 2 && next % 50 !== 0) {
          killed = true;
          // A spin of up to a millisecond, so the kill lands anywhere in the next commit or after it.
          const until = process.hrtime.bigint() + BigInt(Math.floor(Math.random() * 1_000_000));
          while (process.hrtime.bigint() < until);
          child.kill('SIGKILL');
        }
      }
    }
  });
  child.stdin!.write('g');
  assert.equal(await exited, 'SIGKILL', 'the child ran until it was killed');
  await drained;
  const store = openStore({ path });
  t.after(() => store.close());
  const loaded = [...store.loadSessionStates()];
  assert.equal(loaded.length, 4);
  const engine = new CorrelationEngine({ now: () => 0 }, {}, { maxEventsPerIncarnation: 40, maxRequestsPerSession: 8 });
  for (const r of loaded) engine.restore(r.key, r.state, r.log);
  const got = stateHash(engine);
  // The commit after the last acknowledged one may have landed before the kill.
  const landed = [acked, acked + 1].find((n) => pre.get(n)?.hash === got);
  assert.ok(landed !== undefined, `states of commit ${acked} (or ${acked + 1}) read back`);
  const withDeltas = loaded.filter((r) => (r.log?.length ?? 0) > 0).length;
  assert.equal(withDeltas, pre.get(landed)!.logs, 'the sessions with deltas are those the child wrote them for');
  assert.ok(withDeltas > 0, 'some sessions have deltas to replay');
});
