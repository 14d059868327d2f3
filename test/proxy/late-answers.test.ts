/**
 * An answer to a request whose `request.received` went out late (it outlived the span delay)
 * reaches the detector however it came: as a recorded SSE event, with every event buffered since
 * the request's moment (issue 24, defect 2: they were dropped by the DELETE that followed), or, for
 * a JSON answer, as the request's `request.settled` (outcome `answered`).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createForkwatchProxy } from '../../src/proxy/index.js';
import { ATTR_JSONRPC_REQUEST_ID, ATTR_REQUEST_OUTCOME, ATTR_SSE_EVENT_ID, SPAN_REQUEST_RECEIVED, SPAN_REQUEST_SETTLED, SPAN_SSE_EVENT } from '@forkwatch/instrumentation/semconv';

/** Long enough that an answer sent at once is inside it on a loaded machine (the early request must cost no span). */
const DELAY_MS = 500;

async function run(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void, exchange: (url: string, spans: InMemorySpanExporter) => Promise<void>): Promise<InMemorySpanExporter> {
  const up = http.createServer(handler);
  await new Promise<void>((r) => up.listen(0, '127.0.0.1', r));
  const spans = new InMemorySpanExporter();
  const p = await createForkwatchProxy({
    upstream: `http://127.0.0.1:${(up.address() as AddressInfo).port}`,
    host: '127.0.0.1',
    port: 0,
    requestSpanDelayMs: DELAY_MS,
    tracerProvider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }),
  });
  try {
    await exchange(p.url, spans);
  } finally {
    await p.close();
    up.closeAllConnections();
    await new Promise((r) => up.close(r));
  }
  return spans;
}

async function post(url: string, body: string, method = 'POST'): Promise<string> {
  const res = await fetch(`${url}/mcp`, { method, headers: { 'content-type': 'application/json', 'mcp-session-id': 'S1' }, ...(method === 'POST' ? { body } : {}) });
  return res.text();
}

/** Resolves once `cond` holds, polling (bounded). */
async function until(cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('SSE: events after a late request.received, up to its answer, are all emitted, though a DELETE follows', async () => {
  let received = false;
  const spans = await run(
    (req, res) => {
      if (req.method === 'DELETE') {
        res.writeHead(200).end();
        return;
      }
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 'S1' });
      res.write('id: e1\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1}}\n\n');
      const t = setInterval(() => {
        if (!received) return;
        clearInterval(t);
        // After the request's moment: two more progress events and the answer, one chunk.
        res.end(
          'id: e2\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":2}}\n\n' +
            'id: e3\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":3}}\n\n' +
            'id: e4\ndata: {"jsonrpc":"2.0","id":3,"result":{}}\n\n',
        );
      }, 5);
    },
    async (url, out) => {
      const answer = post(url, '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":7}}}');
      await until(() => (received = out.getFinishedSpans().some((s) => s.name === SPAN_REQUEST_RECEIVED)));
      assert.match(await answer, /"result"/);
      await post(url, '', 'DELETE');
    },
  );
  const ids = spans.getFinishedSpans().filter((s) => s.name === SPAN_SSE_EVENT).map((s) => s.attributes[ATTR_SSE_EVENT_ID]);
  assert.deepEqual(ids, ['e1', 'e2', 'e3', 'e4']);
});

test('JSON: the answer to a late request.received is its request.settled (answered); an early one costs no span', async () => {
  let received = false;
  const spans = await run(
    (req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        const id = (JSON.parse(body) as { id: number }).id;
        // Request 1's body outlives the span delay (its head went out first, the body once its
        // request.received is out); request 2 is answered at once.
        res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'S1' }).flushHeaders();
        const end = (): void => void res.end(`{"jsonrpc":"2.0","id":${id},"result":{}}`);
        if (id !== 1) return end();
        const t = setInterval(() => {
          if (!received) return;
          clearInterval(t);
          end();
        }, 5);
      });
    },
    async (url, out) => {
      const answer = post(url, '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}');
      await until(() => (received = out.getFinishedSpans().some((s) => s.name === SPAN_REQUEST_RECEIVED)));
      await answer;
      await post(url, '{"jsonrpc":"2.0","id":2,"method":"tools/list"}');
    },
  );
  const settled = spans.getFinishedSpans().filter((s) => s.name === SPAN_REQUEST_SETTLED);
  assert.deepEqual(settled.map((s) => [s.attributes[ATTR_JSONRPC_REQUEST_ID], s.attributes[ATTR_REQUEST_OUTCOME]]), [['1', 'answered']]);
});
