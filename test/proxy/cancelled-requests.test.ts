/**
 * A sessionful request whose stream broke before its answer and that the client then cancelled:
 * the proxy emits `request.settled` (cancelled, `stream_closed=true`), and nothing when an answer
 * came on another stream of the session, or when the stream never broke. One whose stream the
 * server closed cleanly (polling, a graceful shutdown) settles only on a cancel whose reason is the
 * client's timeout.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import {
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_OBSERVER,
  ATTR_PROGRESS_TOKEN,
  ATTR_REQUEST_DURATION_MS,
  ATTR_REQUEST_OUTCOME,
  ATTR_REQUEST_STREAM_CLOSED,
  SPAN_REQUEST_RECEIVED,
  SPAN_REQUEST_SETTLED,
} from '@forkwatch/instrumentation/semconv';
import { createForkwatchProxy, type ForkwatchProxy } from '../../src/proxy/index.js';
import { cancelledRequests } from '../../src/proxy/cancelled-requests.js';

const SID = 'S-cancel-1';
const CALL = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow_report', arguments: {}, _meta: { progressToken: 1 } } });
const CANCEL = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'McpError: MCP error -32001: Request timed out' } });
// What the TypeScript SDK sends when the app aborts the call (its AbortSignal's reason).
const APP_CANCEL = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'AbortError: This operation was aborted' } });
const PROGRESS = 'id: e1\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n\n';
const ANSWER = 'id: e2\ndata: {"jsonrpc":"2.0","id":1,"result":{"content":[]}}\n\n';

test('cancelledRequests: the ids a cancel names and whether it is a timeout, in a batch too; other bodies name none and never throw', () => {
  const info = (method: string) => [{ kind: 'notification' as const, method }];
  assert.deepEqual(cancelledRequests(info('notifications/cancelled'), CANCEL), [{ id: '1', timedOut: true }]);
  assert.deepEqual(cancelledRequests(info('notifications/cancelled'), APP_CANCEL), [{ id: '1', timedOut: false }]);
  const batch = `[${CANCEL},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"abc","reason":"Request timeout"}},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}]`;
  assert.deepEqual(cancelledRequests([...info('notifications/cancelled'), ...info('notifications/cancelled')], batch), [
    { id: '1', timedOut: true },
    { id: 'abc', timedOut: true },
    { id: '2', timedOut: false },
  ]);
  assert.deepEqual(cancelledRequests(info('notifications/progress'), CANCEL), [], 'parsed only when the body holds a cancel');
  assert.deepEqual(cancelledRequests(info('notifications/cancelled'), '{not json'), []);
  assert.deepEqual(cancelledRequests(info('notifications/cancelled'), undefined), []);
});

/**
 * An upstream with one session: `tools/call` streams a progress event and then waits (no answer)
 * until `answer()`; a resume GET carries the answer when `replayAnswer` is set; cancels get 202.
 */
async function scenario(
  opts: { requestSpanDelayMs: number; replayAnswer: boolean; breakStream: boolean; serverCloses?: boolean; cancel?: string; upstreamDownForCancel?: boolean },
): Promise<{ spans: ReadableSpan[]; proxy: ForkwatchProxy; settled: ReadableSpan[] }> {
  const open = new Set<http.ServerResponse>();
  const upstream = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (d: string) => (body += d));
    req.on('end', () => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': SID });
        res.end(opts.replayAnswer ? ANSWER : '');
        return;
      }
      if (body.includes('notifications/cancelled')) return void res.writeHead(202).end();
      res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': SID });
      res.write(PROGRESS);
      // The server ends the call's stream cleanly without its answer (to be polled, or shutting down).
      if (opts.serverCloses === true) res.end();
      else open.add(res);
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const exporter = new InMemorySpanExporter();
  const proxy = await createForkwatchProxy({
    upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
    host: '127.0.0.1',
    port: 0,
    requestSpanDelayMs: opts.requestSpanDelayMs,
    tracerProvider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
  });
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': SID };
  try {
    // The call: its stream shows one event, then the client goes away (a partition, a timeout).
    const call = http.request(`${proxy.url}/mcp`, { method: 'POST', headers, agent: false });
    const firstEvent = new Promise<void>((resolve, reject) => {
      call.on('response', (res) => {
        res.once('data', () => resolve());
        res.resume();
      });
      call.on('error', (e) => (opts.breakStream ? undefined : reject(e)));
    });
    call.end(CALL);
    await firstEvent;
    const received = (): boolean => exporter.getFinishedSpans().some((s) => s.name === SPAN_REQUEST_RECEIVED && s.attributes[ATTR_JSONRPC_REQUEST_ID] === '1');
    if (opts.breakStream) {
      call.destroy();
      // The proxy emits the request's span at once when its stream breaks.
      for (let i = 0; i < 400 && !received(); i++) await new Promise((r) => setTimeout(r, 25));
      assert.ok(received(), 'request.received on the broken stream');
      // The client's SDK reconnects with the last event id it saw.
      await send(`${proxy.url}/mcp`, 'GET', { accept: 'text/event-stream', 'mcp-session-id': SID, 'last-event-id': 'e1' });
    }
    if (opts.serverCloses === true) {
      await new Promise<void>((resolve) => (call.writableEnded && call.destroyed ? resolve() : call.once('close', () => resolve())));
      await send(`${proxy.url}/mcp`, 'GET', { accept: 'text/event-stream', 'mcp-session-id': SID, 'last-event-id': 'e1' });
    }
    if (opts.upstreamDownForCancel === true) {
      // The server is down (a restart): the cancel is answered 502 by the proxy itself.
      upstream.closeAllConnections();
      await new Promise((r) => upstream.close(r));
    }
    assert.equal(await send(`${proxy.url}/mcp`, 'POST', headers, opts.cancel ?? CANCEL), opts.upstreamDownForCancel === true ? 502 : 202);
    const spans = exporter.getFinishedSpans();
    return { spans, proxy, settled: spans.filter((s) => s.name === SPAN_REQUEST_SETTLED) };
  } finally {
    for (const res of open) res.end();
    await proxy.close();
    upstream.closeAllConnections();
    if (upstream.listening) await new Promise((r) => upstream.close(r));
  }
}

function send(url: string, method: string, headers: Record<string, string>, body?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end(body);
  });
}

for (const requestSpanDelayMs of [1000, 0]) {
  test(`stream broke, never answered, then cancelled: request.settled cancelled with stream_closed (requestSpanDelayMs ${requestSpanDelayMs})`, async () => {
    const { settled, spans } = await scenario({ requestSpanDelayMs, replayAnswer: false, breakStream: true });
    assert.equal(settled.length, 1, spans.map((s) => s.name).join(', '));
    const a = settled[0]!.attributes;
    assert.equal(a[ATTR_REQUEST_OUTCOME], 'cancelled');
    assert.equal(a[ATTR_REQUEST_STREAM_CLOSED], true);
    assert.equal(a[ATTR_JSONRPC_REQUEST_ID], '1');
    assert.equal(a[ATTR_PROGRESS_TOKEN], '1');
    assert.equal(a[ATTR_OBSERVER], 'proxy');
    assert.ok(typeof a[ATTR_REQUEST_DURATION_MS] === 'number' && a[ATTR_REQUEST_DURATION_MS] >= 0);
  });
}

test('stream broke, the resume carried the answer, then a (late) cancel: no settle', async () => {
  const { settled } = await scenario({ requestSpanDelayMs: 1000, replayAnswer: true, breakStream: true });
  assert.deepEqual(settled, []);
});

test('a cancel while the stream is still open (the client timed out, nothing broke): no settle', async () => {
  for (const requestSpanDelayMs of [1000, 0]) {
    const { settled } = await scenario({ requestSpanDelayMs, replayAnswer: false, breakStream: false });
    assert.deepEqual(settled, [], `requestSpanDelayMs ${requestSpanDelayMs}`);
  }
});

for (const requestSpanDelayMs of [1000, 0]) {
  test(`the server closed the stream unanswered, the resume replayed nothing, the client cancelled on its timeout: settled (requestSpanDelayMs ${requestSpanDelayMs})`, async () => {
    const { settled, spans } = await scenario({ requestSpanDelayMs, replayAnswer: false, breakStream: false, serverCloses: true });
    assert.equal(settled.length, 1, spans.map((s) => s.name).join(', '));
    assert.equal(settled[0]!.attributes[ATTR_REQUEST_OUTCOME], 'cancelled');
    assert.equal(settled[0]!.attributes[ATTR_REQUEST_STREAM_CLOSED], true);
    // The detector needs the request itself too, deferral or not.
    assert.ok(spans.some((s) => s.name === SPAN_REQUEST_RECEIVED && s.attributes[ATTR_JSONRPC_REQUEST_ID] === '1'));
  });
}

test('the server closed the stream unanswered and the app cancelled its call (not a timeout): no settle', async () => {
  for (const requestSpanDelayMs of [1000, 0]) {
    const { settled } = await scenario({ requestSpanDelayMs, replayAnswer: false, breakStream: false, serverCloses: true, cancel: APP_CANCEL });
    assert.deepEqual(settled, [], `requestSpanDelayMs ${requestSpanDelayMs}`);
  }
});

test('the server closed the stream to be polled and the resume carried the answer, then a timeout cancel: no settle', async () => {
  const { settled } = await scenario({ requestSpanDelayMs: 1000, replayAnswer: true, breakStream: false, serverCloses: true });
  assert.deepEqual(settled, []);
});

test('the server closed the stream and went down; the timeout cancel meets no upstream (502): settled all the same', async () => {
  const { settled, spans } = await scenario({ requestSpanDelayMs: 1000, replayAnswer: false, breakStream: false, serverCloses: true, upstreamDownForCancel: true });
  assert.equal(settled.length, 1, spans.map((s) => s.name).join(', '));
  assert.equal(settled[0]!.attributes[ATTR_REQUEST_STREAM_CLOSED], true);
});
