import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiServer } from '../../src/http/api-server.js';
import { mergeFindingPages } from '../../src/http/api-peers.js';
import { openStore } from '../../src/storage/open-store.js';
import type { Store } from '../../src/storage/store.js';
import { makeFinding } from '../storage/make-finding.js';

const TOKEN = 'fleet-token';

interface Replica {
  url: string;
  store: Store;
  close(): Promise<void>;
}

async function replica(t: { after(fn: () => unknown): void }, peers: string[], timeoutMs = 2000): Promise<Replica> {
  const dir = mkdtempSync(join(tmpdir(), 'forkwatch-peers-'));
  const store = openStore({ path: join(dir, 'fw.db') });
  const app = await createApiServer({ store, lineage: () => undefined, ready: () => true, authToken: TOKEN, peers: { urls: peers, timeoutMs } });
  await app.listen({ host: '127.0.0.1', port: 0 });
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await app.close();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  };
  t.after(close);
  const addr = app.server.address();
  assert.ok(addr && typeof addr === 'object');
  return { url: `http://127.0.0.1:${addr.port}`, store, close };
}

/** A port nothing listens on (bound, then released). */
async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

async function get(url: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` }, signal: AbortSignal.timeout(10_000) });
  return { status: res.status, body: await res.json() };
}

/** Three replicas; A is asked and fans out to B and C. Findings are spread across them. */
async function fleet(t: { after(fn: () => unknown): void }) {
  const b = await replica(t, []);
  const c = await replica(t, []);
  const a = await replica(t, [b.url, c.url]);
  const all = [a, b, c];
  for (let i = 0; i < 30; i++) {
    // Same detectedAtMs for some, so the id tie-break is exercised across replicas.
    const f = makeFinding({ id: `f${String(i).padStart(2, '0')}`, detectedAtMs: 10_000 + Math.floor(i / 3) * 100, sessionKey: `s${i % 10}`.padEnd(32, '0') });
    all[i % 3]!.store.commit({ findings: [f], states: [] });
  }
  return { a, b, c };
}

test('GET /api/v1/findings fans out: newest first across replicas, cursor paging reaches every finding once', async (t) => {
  const { a } = await fleet(t);
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const r: { status: number; body: any } = await get(`${a.url}/api/v1/findings?limit=7${cursor ? `&cursor=${cursor}` : ''}`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.unavailable, []);
    assert.equal(r.body.replicas, 3);
    for (const f of r.body.items) seen.push(f.id);
    cursor = r.body.nextCursor;
    pages++;
  } while (cursor && pages < 20);
  assert.equal(pages, 5);
  assert.equal(seen.length, 30);
  assert.equal(new Set(seen).size, 30);
  // detectedAtMs DESC, id ASC: f27..f29 are newest.
  assert.deepEqual(seen.slice(0, 4), ['f27', 'f28', 'f29', 'f24']);
});

test('GET /api/v1/findings: filters go to every replica; scope=local answers from one store only', async (t) => {
  const { a } = await fleet(t);
  const filtered = await get(`${a.url}/api/v1/findings?since=10800&limit=100`);
  assert.deepEqual(filtered.body.items.map((f: { id: string }) => f.id), ['f27', 'f28', 'f29', 'f24', 'f25', 'f26']);
  const local = await get(`${a.url}/api/v1/findings?limit=100&scope=local`);
  assert.equal(local.body.items.length, 10);
  assert.equal(local.body.unavailable, undefined);
});

test('a replica that does not answer is named in the answer, not an error; the others still are merged', async (t) => {
  const b = await replica(t, []);
  const port = await deadPort();
  const a = await replica(t, [b.url, `http://127.0.0.1:${port}`]);
  a.store.commit({ findings: [makeFinding({ id: 'fa', detectedAtMs: 2 })], states: [] });
  b.store.commit({ findings: [makeFinding({ id: 'fb', detectedAtMs: 1 })], states: [] });
  const r = await get(`${a.url}/api/v1/findings`);
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.items.map((f: { id: string }) => f.id), ['fa', 'fb']);
  assert.equal(r.body.unavailable.length, 1);
  assert.equal(r.body.unavailable[0].replica, `http://127.0.0.1:${port}`);
});

test('a peer that rejects the token is unavailable with its status', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'forkwatch-peers-'));
  const store = openStore({ path: join(dir, 'fw.db') });
  const other = await createApiServer({ store, lineage: () => undefined, ready: () => true, authToken: 'another-token' });
  await other.listen({ host: '127.0.0.1', port: 0 });
  t.after(async () => {
    await other.close();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const port = (other.server.address() as { port: number }).port;
  const a = await replica(t, [`http://127.0.0.1:${port}`]);
  const r = await get(`${a.url}/api/v1/findings`);
  assert.deepEqual(r.body.unavailable, [{ replica: `http://127.0.0.1:${port}`, reason: 'HTTP 401' }]);
});

test('GET /api/v1/sessions/:key finds the session on whichever replica holds it', async (t) => {
  const { a, c } = await fleet(t);
  // Session s2 has f02 (on C), f12 (on A) and f22 (on B): a session split across all three.
  const key = 's2'.padEnd(32, '0');
  const r = await get(`${a.url}/api/v1/sessions/${key}`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual(r.body.findings.map((f: { id: string }) => f.id).sort(), ['f02', 'f12', 'f22']);
  assert.equal(r.body.heldBy.length, 3);
  assert.deepEqual(r.body.unavailable, []);
  await c.close();
  const partial = await get(`${a.url}/api/v1/sessions/${key}`);
  assert.deepEqual(partial.body.findings.map((f: { id: string }) => f.id).sort(), ['f12', 'f22']);
  assert.equal(partial.body.unavailable[0].replica, c.url);
  const missing = await get(`${a.url}/api/v1/sessions/${'ff'.repeat(16)}`);
  assert.equal(missing.status, 404);
  assert.equal(missing.body.code, 'FORKWATCH_ERR_NOT_FOUND');
  assert.match(missing.body.message, /not answering/);
  assert.equal(missing.body.unavailable[0].replica, c.url);
});

test('mergeFindingPages: dedups by id, keeps the order, and has a cursor only when more remain', () => {
  const f = (id: string, t: number) => ({ id, detectedAtMs: t });
  const m = mergeFindingPages([{ items: [f('a', 3), f('c', 1)], nextCursor: null }, { items: [f('b', 2), f('a', 3)], nextCursor: null }], 2);
  assert.deepEqual(m.items.map((x) => x.id), ['a', 'b']);
  assert.ok(m.nextCursor);
  const all = mergeFindingPages([{ items: [f('a', 3)], nextCursor: null }, { items: [f('b', 2)], nextCursor: null }], 5);
  assert.equal(all.nextCursor, null);
});
