/**
 * `--guard` and a resume that replays nothing (docs/proxy.md, "Empty replays are probed"): the
 * proxy pings the session upstream and judges the answer's event. Both sides of the boundary: ids
 * that show a restart (a counter back at e1) refuse the resume 404; the next id of the log (a live
 * session whose tool is silent) and ids without order (new to the proxy, cannot be judged) let the
 * empty 200 through.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createForkwatchProxy } from '../../src/proxy/index.js';

type Mode = 'rehydrated' | 'live' | 'unordered';

async function resumeThroughGuard(mode: Mode, keepOpen: boolean): Promise<{ status: number; pings: number; stats: Record<string, number> }> {
  let pings = 0;
  const up = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      const sse = (text: string, end = true): void => {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 'S1' });
        if (text) res.write(text);
        if (end) res.end();
        else res.flushHeaders();
      };
      if (req.method === 'GET') return sse('', !keepOpen); // the replay: nothing
      if (body.includes('"ping"')) {
        pings++;
        const id = mode === 'rehydrated' ? 'e1' : mode === 'live' ? 'e3' : `s_${Date.now()}_x7q`;
        return sse(`id: ${id}\ndata: {"jsonrpc":"2.0","id":"p","result":{}}\n\n`);
      }
      sse('id: e1\ndata: {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18"}}\n\nid: e2\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{}}\n\n');
    });
  });
  await new Promise<void>((r) => up.listen(0, '127.0.0.1', r));
  const p = await createForkwatchProxy({
    upstream: `http://127.0.0.1:${(up.address() as AddressInfo).port}`,
    host: '127.0.0.1',
    port: 0,
    guard: true,
    guardHoldMs: 100,
    tracerProvider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new InMemorySpanExporter())] }),
  });
  try {
    const init = await fetch(`${p.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}' });
    await init.text();
    const ac = new AbortController();
    const res = await fetch(`${p.url}/mcp`, { headers: { 'mcp-session-id': 'S1', 'last-event-id': 'e2', accept: 'text/event-stream' }, signal: ac.signal });
    ac.abort();
    const s = p.stats();
    return { status: res.status, pings, stats: { ...s.guardRefusals } };
  } finally {
    await p.close();
    up.closeAllConnections();
    await new Promise((r) => up.close(r));
  }
}

for (const keepOpen of [false, true]) {
  const how = keepOpen ? 'kept open' : 'ended';
  test(`an empty replay (${how}) whose probe answers with an id already forwarded (the log began again): 404 at once`, async () => {
    const r = await resumeThroughGuard('rehydrated', keepOpen);
    assert.equal(r.status, 404);
    assert.equal(r.pings, 1);
    assert.equal(r.stats.resumeForked, 1);
  });

  test(`an empty replay (${how}) whose probe answers with the log's next id (a live session, its tool silent): 200`, async () => {
    const r = await resumeThroughGuard('live', keepOpen);
    assert.equal(r.status, 200);
    assert.equal(r.pings, 1);
  });

  test(`an empty replay (${how}) whose probe answers with an id without order, new to the proxy: 200 (cannot be judged: the boundary)`, async () => {
    const r = await resumeThroughGuard('unordered', keepOpen);
    assert.equal(r.status, 200);
    assert.equal(r.pings, 1);
  });
}
