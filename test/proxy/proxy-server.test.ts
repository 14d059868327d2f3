import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createForkwatchProxy, type ForkwatchProxy } from '../../src/proxy/index.js';
import { ATTR_OBSERVER, ATTR_SSE_EVENT_ID, SPAN_RESUME, SPAN_SSE_EVENT } from '@forkwatch/instrumentation/semconv';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

async function upstream(handler: Handler): Promise<{ url: string; server: http.Server }> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function withProxy(handler: Handler, fn: (p: ForkwatchProxy, spans: InMemorySpanExporter, up: { url: string }) => Promise<void>, guard = false, requestSpanDelayMs?: number): Promise<void> {
  const up = await upstream(handler);
  const spans = new InMemorySpanExporter();
  const p = await createForkwatchProxy({
    upstream: up.url,
    host: '127.0.0.1',
    port: 0,
    guard,
    maxEventChars: 1000,
    ...(requestSpanDelayMs !== undefined ? { requestSpanDelayMs } : {}),
    tracerProvider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }),
  });
  try {
    await fn(p, spans, up);
  } finally {
    await p.close();
    up.server.closeAllConnections();
    await new Promise((r) => up.server.close(r));
  }
}

function get(url: string, headers: Record<string, string> = {}, method = 'GET', body?: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const SSE_PIECES = ['id: e1\nda', 'ta: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n\n', ': comment\r\n', 'id: e2\r\ndata: not json\r\n\r\n', `id: big\ndata: ${'x'.repeat(5000)}\n\n`, 'id: e3\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\nid: cut\ndata: {"trunc'];

test('SSE and JSON bodies pass through byte for byte; malformed and oversize events are counted, not recorded', async () => {
  await withProxy(
    (req, res) => {
      if (req.url === '/json') {
        res.writeHead(200, { 'content-type': 'application/json', 'x-custom': 'kept' });
        res.end('{"jsonrpc":"2.0","id":1,"result":{"ok":true}}');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 'S1' });
      let i = 0;
      const next = (): void => {
        if (i === SSE_PIECES.length) return void res.end();
        res.write(SSE_PIECES[i++]);
        setTimeout(next, 5);
      };
      next();
    },
    async (p, spans, up) => {
      const direct = await get(`${up.url}/mcp`);
      const via = await get(`${p.url}/mcp`);
      assert.equal(via.status, 200);
      assert.deepEqual(via.body, direct.body);
      assert.equal(via.body.toString(), SSE_PIECES.join(''));
      const json = await get(`${p.url}/json`, { 'content-type': 'application/json' }, 'POST', '{"jsonrpc":"2.0","id":1,"method":"tools/list"}');
      assert.equal(json.body.toString(), '{"jsonrpc":"2.0","id":1,"result":{"ok":true}}');
      assert.equal(json.headers['x-custom'], 'kept');
      const s = p.stats();
      assert.equal(s.malformedSse, 2, 'one event with non-JSON data, one body ending inside an event');
      assert.equal(s.oversizeEvents, 1);
      const ids = spans.getFinishedSpans().filter((x) => x.name === SPAN_SSE_EVENT).map((x) => x.attributes[ATTR_SSE_EVENT_ID]);
      assert.deepEqual(ids, ['e1', 'e2', 'e3'], 'the oversize and the truncated event are not recorded');
      assert.ok(spans.getFinishedSpans().every((x) => x.attributes[ATTR_OBSERVER] === 'proxy'));
    },
    false,
    0, // every event emitted as it passes (no waiting for a moment)
  );
});

test('events reach the client one by one, before the upstream answer ends', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  await withProxy(
    (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('id: 1\ndata: {}\n\n');
      void gate.then(() => res.end('id: 2\ndata: {}\n\n'));
    },
    async (p) => {
      const first = await new Promise<string>((resolve, reject) => {
        const req = http.get(`${p.url}/mcp`, { agent: false }, (res) => {
          res.setEncoding('utf8');
          res.once('data', (d: string) => {
            resolve(d);
            release();
            res.resume();
          });
        });
        req.on('error', reject);
      });
      assert.equal(first, 'id: 1\ndata: {}\n\n');
    },
  );
});

test('upstream down: 502 with a JSON-RPC error body, counted', async () => {
  const up = await upstream(() => {});
  const url = up.url;
  await new Promise((r) => up.server.close(r));
  const p = await createForkwatchProxy({ upstream: url, host: '127.0.0.1', port: 0 });
  try {
    const res = await get(`${p.url}/mcp`, { 'content-type': 'application/json' }, 'POST', '{"jsonrpc":"2.0","id":1,"method":"ping"}');
    assert.equal(res.status, 502);
    const body = JSON.parse(res.body.toString()) as { jsonrpc: string; error: { code: number; message: string } };
    assert.equal(body.jsonrpc, '2.0');
    assert.equal(body.error.code, -32603);
    assert.equal(p.stats().upstreamErrors, 1);
  } finally {
    await p.close();
  }
});

test('upstream silent past headersTimeoutMs: 504, counted', async () => {
  const up = await upstream(() => {});
  const p = await createForkwatchProxy({ upstream: up.url, host: '127.0.0.1', port: 0, headersTimeoutMs: 100 });
  try {
    const res = await get(`${p.url}/mcp`);
    assert.equal(res.status, 504);
    assert.equal(p.stats().upstreamTimeouts, 1);
  } finally {
    await p.close();
    up.server.closeAllConnections();
    await new Promise((r) => up.server.close(r));
  }
});

test('a client that disconnects mid-stream closes the upstream request', async () => {
  let upstreamClosed!: () => void;
  const closed = new Promise<void>((r) => (upstreamClosed = r));
  await withProxy(
    (req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('id: 1\ndata: {}\n\n');
      res.on('close', () => upstreamClosed());
    },
    async (p) => {
      await new Promise<void>((resolve) => {
        const req = http.get(`${p.url}/mcp`, { agent: false }, (res) => {
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        });
      });
      await closed;
      for (let i = 0; i < 100 && p.stats().clientAborts === 0; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(p.stats().clientAborts, 1);
    },
  );
});

test('--guard: a request answered under another session id is answered 404 / -32001', async () => {
  await withProxy(
    (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'OTHER' });
      res.end('{"jsonrpc":"2.0","id":2,"result":{}}');
    },
    async (p) => {
      const res = await get(`${p.url}/mcp`, { 'content-type': 'application/json', 'mcp-session-id': 'MINE' }, 'POST', '{"jsonrpc":"2.0","id":2,"method":"tools/list"}');
      assert.equal(res.status, 404);
      assert.equal((JSON.parse(res.body.toString()) as { error: { code: number } }).error.code, -32001);
      assert.equal(p.stats().guardRefusals.sessionReissued, 1);
    },
    true,
  );
});

test('bad options are refused with every problem named', async () => {
  await assert.rejects(createForkwatchProxy({ upstream: 'ftp://x', guardHoldMs: -1 }), /upstream must be an http:\/\/ URL.*guardHoldMs must be a positive number/);
});

test('event history waits for a moment: a resume emits the session\'s earlier events with their own times', async () => {
  let n = 0;
  await withProxy(
    (req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 'S1' });
      if (req.headers['last-event-id'] === undefined) res.end(`id: e${++n}\ndata: {}\n\nid: e${++n}\ndata: {}\n\n`);
      else res.end(`id: e${++n}\ndata: {}\n\n`);
    },
    async (p, spans) => {
      const events = (): unknown[] => spans.getFinishedSpans().filter((x) => x.name === SPAN_SSE_EVENT).map((x) => x.attributes[ATTR_SSE_EVENT_ID]);
      await get(`${p.url}/mcp`, { 'mcp-session-id': 'S1' });
      assert.deepEqual(events(), [], 'no moment yet: nothing emitted');
      await get(`${p.url}/mcp`, { 'mcp-session-id': 'S1', 'last-event-id': 'e2' });
      assert.deepEqual(events(), ['e1', 'e2', 'e3'], 'the resume is a moment: history, then live events');
      const ms = (name: string, id?: string): number => {
        const x = spans.getFinishedSpans().find((y) => y.name === name && (id === undefined || y.attributes[ATTR_SSE_EVENT_ID] === id))!;
        return x.startTime[0] * 1000 + x.startTime[1] / 1e6;
      };
      // Same clock on both (the proxy's): e1 passed before the resume arrived, though emitted after.
      assert.ok(ms(SPAN_SSE_EVENT, 'e1') < ms(SPAN_RESUME), 'stamped with when it passed');
    },
  );
});
