import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { connect } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiServer } from '../../src/http/api-server.js';
import { MAX_PEER_ANSWER_BYTES } from '../../src/http/api-peers.js';

/** The documented fan-out marker (docs/api.md). */
const FAN_OUT_HEADER = 'x-forkwatch-fan-out';
import { openStore } from '../../src/storage/open-store.js';

// Issue 25 items 5-8: a fan-out asks peers only for the fixed paths, never follows a redirect,
// reads at most MAX_PEER_ANSWER_BYTES, and never recurses. The peers here are plain node:http
// servers that record what reaches them (and misbehave as told).

const TOKEN = 'fleet-token';
type T = { after(fn: () => unknown): void };

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
}

/** A peer that records every request and answers with `handler` (default: an empty findings page). */
async function fakePeer(t: T, handler?: (req: http.IncomingMessage, res: http.ServerResponse, url: string) => void) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    if (handler) return handler(req, res, url);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ items: [], nextCursor: null }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return { url, seen, server };
}

async function replica(t: T, peers: string[], timeoutMs = 2000): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'forkwatch-peers-'));
  const store = openStore({ path: join(dir, 'fw.db') });
  const app = await createApiServer({ store, lineage: () => undefined, ready: () => true, authToken: TOKEN, peers: { urls: peers, timeoutMs } });
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.after(async () => {
    await app.close();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
}

/** Sends `target` verbatim in the request line (fetch would normalise it) and returns status and body. */
function rawGet(base: string, target: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const sock = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => (sock.destroy(), reject(new Error('no answer within 20 s'))), 20_000);
    sock.on('data', (c) => chunks.push(c));
    sock.on('error', reject);
    sock.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (!m) return reject(new Error(`not an HTTP answer: ${JSON.stringify(text.slice(0, 200))}`));
      resolve({ status: Number(m[1]), body: text.slice(text.indexOf('\r\n\r\n') + 4) });
    });
    const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    sock.write(`GET ${target} HTTP/1.1\r\nhost: ${hostname}:${port}\r\nauthorization: Bearer ${TOKEN}\r\n${extra}connection: close\r\n\r\n`);
  });
}

async function get(url: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` }, signal: AbortSignal.timeout(20_000) });
  return { status: res.status, body: await res.json() };
}

test('item 5: a session key with backslash dot segments never reaches another path of a peer', async (t) => {
  const peer = await fakePeer(t);
  const a = await replica(t, [peer.url]);
  for (const target of ['/api/v1/sessions/x\\..\\..\\..\\..\\metrics', '/api/v1/sessions/..%5C..%5Cmetrics', '/api/v1/sessions/%2e%2e', '/api/v1/sessions/x%2F..%2F..%2Fmetrics']) {
    const r = await rawGet(a, target);
    assert.equal(r.status, 400, `${target}: ${r.body}`);
    assert.match(JSON.parse(r.body).message, /is not a session key/);
  }
  assert.deepEqual(peer.seen.map((s) => s.url), [], 'nothing reached the peer');
  // An ordinary key still fans out, percent-encoded into the fixed template.
  const r = await get(`${a}/api/v1/sessions/${encodeURIComponent('k y%')}`);
  assert.equal(r.status, 404);
  assert.deepEqual(peer.seen.map((s) => s.url), ['/api/v1/sessions/k%20y%25?scope=local']);
});

test('item 6: a peer that redirects is unavailable; the redirect is not followed, to another host or in a loop', async (t) => {
  const elsewhere = await fakePeer(t);
  const redirecting = await fakePeer(t, (_req, res) => res.writeHead(302, { location: `${elsewhere.url}/api/v1/findings` }).end());
  const looping = await fakePeer(t, (req, res) => res.writeHead(307, { location: req.url ?? '/' }).end());
  const a = await replica(t, [redirecting.url, looping.url]);
  const r = await get(`${a}/api/v1/findings`);
  assert.equal(r.status, 200);
  assert.deepEqual(
    r.body.unavailable,
    [
      { replica: redirecting.url, reason: 'HTTP 302: redirects are not followed' },
      { replica: looping.url, reason: 'HTTP 307: redirects are not followed' },
    ],
  );
  assert.equal(elsewhere.seen.length, 0, 'the redirect target was never asked');
  assert.equal(looping.seen.length, 1, 'the loop was not followed');
});

test('item 7: a peer answer is read only up to the limit: an endless answer is cut there, not at the timeout', async (t) => {
  let written = 0;
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  const endless = await fakePeer(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const pump = (): void => {
      while (!res.destroyed && res.write(chunk)) written += chunk.length;
      if (!res.destroyed) written += chunk.length;
    };
    res.on('drain', pump);
    pump();
  });
  const declared = await fakePeer(t, (_req, res) => {
    // Declares 1 GiB and sends nothing more: refused on the header alone.
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(1024 ** 3) });
    res.flushHeaders();
  });
  const timeoutMs = 30_000;
  const a = await replica(t, [endless.url, declared.url], timeoutMs);
  const t0 = performance.now();
  const r = await get(`${a}/api/v1/findings`);
  const ms = performance.now() - t0;
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.unavailable, [
    { replica: endless.url, reason: `answer over ${MAX_PEER_ANSWER_BYTES} bytes` },
    { replica: declared.url, reason: `answer over ${MAX_PEER_ANSWER_BYTES} bytes` },
  ]);
  assert.ok(ms < timeoutMs / 2, `answered in ${Math.round(ms)} ms, well before the ${timeoutMs} ms timeout`);
  // The peer could write only what the limit and the sockets' buffers hold before the detector hung up.
  assert.ok(written < MAX_PEER_ANSWER_BYTES + 64 * 1024 * 1024, `peer wrote ${written} bytes`);
});

test('item 8: a fan-out never recurses: peers get the fan-out header and scope=local whatever the target; a request with the header is answered locally', async (t) => {
  const peer = await fakePeer(t);
  const a = await replica(t, [peer.url]);
  for (const target of ['/api/v1/findings#x', '/api/v1/findings?scope=locale#', '/api/v1/findings?limit=5&scope=local#']) {
    const r = await rawGet(a, target);
    assert.equal(r.status, 200, `${target}: ${r.body}`);
  }
  assert.equal(peer.seen.length, 3);
  for (const s of peer.seen) {
    assert.equal(s.headers[FAN_OUT_HEADER], '1', s.url);
    assert.equal(new URL(s.url, 'http://x').searchParams.get('scope'), 'local', s.url);
  }
  assert.deepEqual(peer.seen.map((s) => s.url), ['/api/v1/findings?scope=local', '/api/v1/findings?scope=local', '/api/v1/findings?limit=5&scope=local']);
  // A replica asked with the header answers from its own store, without scope=local in the target.
  const before = peer.seen.length;
  const local = await rawGet(a, '/api/v1/findings', { [FAN_OUT_HEADER]: '1' });
  assert.equal(local.status, 200);
  assert.equal(JSON.parse(local.body).unavailable, undefined);
  assert.equal(peer.seen.length, before, 'no fan-out from a fan-out request');
});
