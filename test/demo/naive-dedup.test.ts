import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { naiveDedupFetch } from '../../src/demo/naive-dedup.js';
import { wireTap } from '../../src/demo/wire-tap.js';

/** Serves the SSE body given per request (query ?n=index) under a fixed session id. */
async function sseServer(bodies: string[], sessionId = 'S1'): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    const n = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('n') ?? 0);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': sessionId });
    // Written in small pieces so the wrapper must re-frame across chunks.
    const body = bodies[n] ?? '';
    let i = 0;
    const tick = (): void => {
      if (i >= body.length) return void res.end();
      res.write(body.slice(i, i + 7));
      i += 7;
      setImmediate(tick);
    };
    tick();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/mcp`, close: () => new Promise((r) => server.close(() => r())) };
}

const ev = (id: string, data: unknown): string => `event: message\nid: ${id}\ndata: ${JSON.stringify(data)}\n\n`;
const progress = (n: number) => ({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: n } });
const result = (id: number) => ({ jsonrpc: '2.0', id, result: { content: [] } });

test('drops events whose (session id, event id) it has seen, passing the rest byte for byte', { timeout: 30_000 }, async () => {
  const first = ev('e1', progress(1)) + ': keepalive\n\n' + ev('e2', result(1));
  const second = ev('e1', progress(1)) + ev('e2', result(2)) + ev('e3', progress(3));
  const srv = await sseServer([first, second]);
  try {
    const dedup = naiveDedupFetch(fetch);
    assert.equal(await (await dedup.fetch(`${srv.url}?n=0`)).text(), first);
    const text = await (await dedup.fetch(`${srv.url}?n=1`)).text();
    assert.equal(text, ev('e3', progress(3)), 'the new result (id 2) was dropped as a duplicate of e2');
    assert.deepEqual(
      dedup.dropped.map((d) => [d.sessionId, d.eventId, d.kind, d.jsonrpcId ?? null]),
      [
        ['S1', 'e1', 'notification', null],
        ['S1', 'e2', 'response', '2'],
      ],
    );
    assert.equal(dedup.delivered, 3);
  } finally {
    await srv.close();
  }
});

test('keys are scoped by session id: the same event id under another session passes', { timeout: 30_000 }, async () => {
  const a = await sseServer([ev('e1', progress(1))], 'S1');
  const b = await sseServer([ev('e1', progress(1))], 'S2');
  try {
    const dedup = naiveDedupFetch(fetch);
    await (await dedup.fetch(a.url)).text();
    assert.equal(await (await dedup.fetch(b.url)).text(), ev('e1', progress(1)));
    assert.deepEqual(dedup.dropped, []);
  } finally {
    await a.close();
    await b.close();
  }
});

test('wire tap records exchanges and id-bearing events without changing the body', { timeout: 30_000 }, async () => {
  const body = ev('e1', progress(1)) + ev('e2', result(1));
  const srv = await sseServer([body]);
  try {
    const seen: string[] = [];
    const tap = wireTap(fetch, { onEvent: (e) => seen.push(`${e.eventId}:${e.info.kind}`) });
    const res = await tap.fetch(srv.url, { headers: { 'last-event-id': 'e0', 'mcp-session-id': 'S1' } });
    assert.equal(await res.text(), body);
    assert.deepEqual(seen, ['e1:notification', 'e2:response']);
    assert.equal(tap.exchanges[0]!.lastEventId, 'e0');
    assert.equal(tap.exchanges[0]!.answeredSessionId, 'S1');
    assert.equal(tap.events[1]!.info.id, '1');
  } finally {
    await srv.close();
  }
});
