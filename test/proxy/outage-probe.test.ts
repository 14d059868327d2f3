/**
 * `--guard` after the upstream could not be reached (docs/proxy.md, "After an outage"): the server
 * went down (the proxy answered the client's reconnect `502`), came back, and rebuilt the session on
 * the client's cancel (a notification answered `202`, no event). The proxy pings the session and
 * judges the answer's event. Both sides of the boundary: a log begun again (a counter back at `e1`)
 * records the new life (`session.created`, created by `notifications/cancelled`) and the session is
 * lost (`404`); the log's next id (the server kept the session) changes nothing; a plain proxy
 * never probes and sees the new life only at its next event.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createForkwatchProxy } from '../../src/proxy/index.js';

type Mode = 'rehydrated' | 'kept';

/** An upstream: every POST answered on SSE with the next counter ids; a notification `202`. */
function upstream(first: number, pings: { n: number }, mode: Mode | 'original'): http.Server {
  let next = first;
  return http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 'S1' });
        return res.end();
      }
      if (body.includes('notifications/')) {
        res.writeHead(202, { 'mcp-session-id': 'S1' });
        return res.end();
      }
      if (body.includes('"ping"')) pings.n++;
      if (mode === 'original' && body.includes('"ping"')) throw new Error('the original upstream is never probed');
      res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 'S1' });
      const id = `e${next++}`;
      res.end(`id: ${id}\ndata: {"jsonrpc":"2.0","id":${JSON.stringify(body.includes('"ping"') ? 'p' : 0)},"result":{"n":${next}}}\n\n`);
    });
  });
}

async function listen(s: http.Server, port = 0): Promise<number> {
  await new Promise<void>((r) => s.listen(port, '127.0.0.1', r));
  return (s.address() as AddressInfo).port;
}
async function stop(s: http.Server): Promise<void> {
  s.closeAllConnections();
  await new Promise((r) => s.close(r));
}

async function outage(mode: Mode, guard: boolean, closeAtOnce = false): Promise<{ reconnect: number; cancel: number; next: number; pings: number; created: string[] }> {
  const pings = { n: 0 };
  const a = upstream(1, pings, 'original');
  const port = await listen(a);
  const exporter = new InMemorySpanExporter();
  const p = await createForkwatchProxy({
    upstream: `http://127.0.0.1:${port}`,
    host: '127.0.0.1',
    port: 0,
    guard,
    guardHoldMs: 200,
    requestSpanDelayMs: 0,
    tracerProvider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
  });
  const post = (body: string, sid?: string): Promise<Response> =>
    fetch(`${p.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(sid ? { 'mcp-session-id': sid } : {}) },
      body,
    });
  let b: http.Server | undefined;
  try {
    await (await post('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}')).text();
    await (await post('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":1}}}', 'S1')).text();
    await stop(a); // the server is down: its address refuses connections
    const reconnect = await fetch(`${p.url}/mcp`, { headers: { 'mcp-session-id': 'S1', 'last-event-id': 'e2', accept: 'text/event-stream' } });
    await reconnect.text();
    // It comes back on the same address: a rehydrating one begins its log again, one that kept the session goes on.
    b = upstream(mode === 'rehydrated' ? 1 : 3, pings, mode);
    await listen(b, port);
    const cancel = await post('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"Request timed out"}}', 'S1');
    await cancel.text();
    if (closeAtOnce) {
      // The proxy stops right after the 202 (a rolling restart of the sidecar): the probe lands first.
      await p.close();
      const created = exporter.getFinishedSpans().filter((s) => s.name === 'forkwatch.session.created').map((s) => String(s.attributes['forkwatch.session.created_by']));
      return { reconnect: reconnect.status, cancel: cancel.status, next: 0, pings: pings.n, created };
    }
    if (guard) {
      const until = Date.now() + 5_000;
      while (pings.n === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    }
    const next = await post('{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}', 'S1');
    await next.text();
    const created = exporter
      .getFinishedSpans()
      .filter((s) => s.name === 'forkwatch.session.created')
      .map((s) => String(s.attributes['forkwatch.session.created_by']));
    return { reconnect: reconnect.status, cancel: cancel.status, next: next.status, pings: pings.n, created };
  } finally {
    await p.close();
    if (b) await stop(b);
  }
}

test('--guard: the session rebuilt on the cancel after an outage (log begun again) is a new life, lost to the client', async () => {
  const r = await outage('rehydrated', true);
  assert.equal(r.reconnect, 502, 'the reconnect met a closed address');
  assert.equal(r.cancel, 202);
  assert.equal(r.pings, 1);
  assert.deepEqual(r.created, ['initialize', 'notifications/cancelled']);
  assert.equal(r.next, 404, 'the client is spared the new life');
});

test('--guard: the upstream kept the session through the outage (the log goes on): nothing said, nothing refused', async () => {
  const r = await outage('kept', true);
  assert.equal(r.pings, 1);
  assert.deepEqual(r.created, ['initialize']);
  assert.equal(r.next, 200);
});

test('plain proxy: never probes (it sends nothing of its own); the new life is seen only when an event shows it', async () => {
  const r = await outage('rehydrated', false);
  assert.equal(r.pings, 0);
  // Not at the cancel (no event); at the next answer whose first id begins the log again.
  assert.deepEqual(r.created, ['initialize', 'tools/list']);
  assert.equal(r.next, 200);
});

test('--guard: a proxy closed right after the 202 waits for the probe, and the new life is recorded', async () => {
  const r = await outage('rehydrated', true, true);
  assert.equal(r.pings, 1);
  assert.deepEqual(r.created, ['initialize', 'notifications/cancelled']);
});
