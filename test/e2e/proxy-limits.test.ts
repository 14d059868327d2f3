import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { connect } from 'node:net';
import { readFileSync } from 'node:fs';
import { startProxyProcess, type ProxyProcess } from './helpers/proxy-process.js';

// Issue 25 items 3-4, against `forkwatch proxy` as a real process in front of a plain node:http
// upstream that misbehaves as told: a huge or endless initialize answer under --guard, and
// clients that send their request slowly.

type T = { after(fn: () => unknown): void };
const LIMIT = 1024 * 1024;
const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });

/** An upstream whose initialize answer never ends (as fast as its socket drains); other requests get `sse`. */
async function endlessUpstream(t: T) {
  const state = { written: 0, closed: false, initializes: 0 };
  const server = http.createServer((req, res) => {
    if (req.method === 'GET') {
      // An SSE stream of 8 events, 300 ms apart: it outlives a 1 s client request timeout.
      res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 'sess-1' });
      let n = 0;
      const timer = setInterval(() => {
        res.write(`id: e${++n}\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"n":${n}}}\n\n`);
        if (n === 8) {
          clearInterval(timer);
          res.end();
        }
      }, 300);
      res.on('close', () => clearInterval(timer));
      return;
    }
    // Like an MCP server, it answers once it has the whole JSON body.
    req.resume();
    req.on('end', () => {
      state.initializes++;
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'sess-1' });
      res.write('{"jsonrpc":"2.0","id":1,"result":{"padding":"');
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      const pump = (): void => {
        while (!res.destroyed && res.write(chunk)) state.written += chunk.length;
        if (!res.destroyed) state.written += chunk.length;
      };
      res.on('drain', pump);
      res.on('close', () => (state.closed = true));
      pump();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, state };
}

async function proxy(t: T, upstream: string, args: string[]): Promise<ProxyProcess> {
  const p = await startProxyProcess({ upstream, args });
  t.after(() => p.stop());
  return p;
}

async function until(what: string, ok: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m![1]) / 1024;
}

test('item 3: under --guard an initialize answer past --max-initialize-bytes is a 502 naming the flag, and the upstream is dropped', async (t) => {
  const up = await endlessUpstream(t);
  const p = await proxy(t, up.url, ['--guard', '--max-initialize-bytes', String(LIMIT)]);
  const res = await fetch(`http://127.0.0.1:${p.port}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: INIT,
    signal: AbortSignal.timeout(20_000),
  });
  if (res.status !== 502) await res.body?.cancel();
  assert.equal(res.status, 502);
  const body = (await res.json()) as { error: { code: number; message: string; data: { reason: string } } };
  assert.equal(body.error.code, -32603);
  assert.match(body.error.data.reason, /--max-initialize-bytes \(1048576 bytes\)/);
  await until('the upstream answer is dropped', () => up.state.closed, 10_000);
  assert.ok(up.state.written < LIMIT + 32 * 1024 * 1024, `the upstream wrote ${up.state.written} bytes`);
});

test('item 3: a client that never reads and an endless initialize answer: the proxy reads a bounded amount and its memory stays flat', async (t) => {
  const up = await endlessUpstream(t);
  const p = await proxy(t, up.url, ['--guard', '--max-initialize-bytes', String(LIMIT)]);
  const before = rssMiB(p.pid);
  const sock = connect(p.port, '127.0.0.1');
  t.after(() => sock.destroy());
  sock.on('error', () => undefined);
  sock.pause(); // never reads
  sock.write(`POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: ${Buffer.byteLength(INIT)}\r\n\r\n${INIT}`);
  await until('the upstream answer is dropped', () => up.state.closed, 10_000).catch((err: Error) => {
    throw new Error(`${err.message}; the upstream wrote ${up.state.written} bytes, proxy RSS ${Math.round(rssMiB(p.pid))} MiB`);
  });
  assert.ok(up.state.written < LIMIT + 32 * 1024 * 1024, `the upstream wrote ${up.state.written} bytes`);
  const grew = rssMiB(p.pid) - before;
  t.diagnostic(`upstream wrote ${(up.state.written / 1048576).toFixed(1)} MiB before it was dropped; proxy RSS grew ${grew.toFixed(1)} MiB`);
  assert.ok(grew < 64, `proxy RSS grew ${grew.toFixed(1)} MiB`);
});

/** Sends `head` then one byte of `rest` every `everyMs`; resolves with what the proxy answered and when it closed. */
function slowRequest(port: number, head: string, rest: string, everyMs: number, boundMs: number): Promise<{ closedAfterMs: number; answer: string }> {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const sock = connect(port, '127.0.0.1');
    let answer = '';
    let i = 0;
    const timer = setInterval(() => {
      if (i < rest.length) sock.write(rest[i++]!);
    }, everyMs);
    const bound = setTimeout(() => {
      clearInterval(timer);
      sock.destroy();
      reject(new Error(`the proxy kept a slow request open for ${boundMs} ms (${i} bytes trickled)`));
    }, boundMs);
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => (answer += d));
    sock.on('error', () => undefined);
    sock.on('close', () => {
      clearInterval(timer);
      clearTimeout(bound);
      resolve({ closedAfterMs: Date.now() - t0, answer });
    });
    sock.write(head);
  });
}

test('item 4: slow request bodies and slow headers time out (--client-request-timeout-ms, --client-headers-timeout-ms); a long answer stream does not', async (t) => {
  const up = await endlessUpstream(t);
  const p = await proxy(t, up.url, ['--client-request-timeout-ms', '1000', '--client-headers-timeout-ms', '500']);
  const body = 'x'.repeat(200);
  const slowBody = await slowRequest(p.port, `POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`, body, 100, 15_000);
  assert.ok(slowBody.closedAfterMs < 8000, `slow body closed after ${slowBody.closedAfterMs} ms`);
  assert.match(slowBody.answer, /^HTTP\/1\.1 408/);
  const slowHead = await slowRequest(p.port, 'GET /mcp HTTP/1.1\r\n', 'x-slow: ' + 'y'.repeat(200), 100, 15_000);
  assert.ok(slowHead.closedAfterMs < 8000, `slow headers closed after ${slowHead.closedAfterMs} ms`);
  // An SSE answer lasting 2.4 s (past the 1 s request timeout) is delivered whole.
  const t0 = Date.now();
  const res = await fetch(`http://127.0.0.1:${p.port}/mcp`, { headers: { accept: 'text/event-stream', 'mcp-session-id': 'sess-1' }, signal: AbortSignal.timeout(20_000) });
  const text = await res.text();
  assert.equal((text.match(/^id: e\d/gm) ?? []).length, 8, text);
  assert.ok(Date.now() - t0 > 2000);
});
