/**
 * The corpus's Python-client dimension, its pure parts and its wire tap: reading what
 * bench/corpus/python_client.py prints, matching the app dedup's drops to wire events, which
 * cells a Python client plays, and the tapping forwarder (bench/corpus/tap-forwarder.ts) over real
 * sockets: it records exchanges and id-bearing SSE events in the seed tap's shape and passes a cut
 * upstream stream down to the client.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { droppedOnWire, parsePythonClientOutput } from '../../bench/corpus/python-client-output.js';
import { pythonClientNotPlayable } from '../../bench/corpus/python-client-cells.js';
import { CORPUS_PATHS } from '../../bench/corpus/corpus-paths.js';
import type { CorpusCell, CorpusClient, CorpusFault, CorpusServer } from '../../bench/corpus/corpus-cell.js';
import { forwardedRequestHeaders, startTapForwarder } from '../../bench/corpus/tap-forwarder.js';
import type { TappedEvent } from '../../src/demo/wire-tap.js';

test('parsePythonClientOutput reads progress lines, the summary, and no summary as pending', () => {
  const out = [
    '{"initialized": true}',
    'Session termination failed: 404',
    '{"settled": 2, "outcome": "error"}',
    '{"settled": 1, "outcome": "timeout"}',
    JSON.stringify({
      calls: [
        { attempt: 1, outcome: 'timeout', progress: 4, started_ms: 50, settled_ms: 3050, error: { name: 'MCPError', message: "Request 'tools/call' timed out", code: -32001 } },
        { attempt: 2, outcome: 'weird', progress: 0, started_ms: 1400 },
      ],
      dropped_by_dedup: [{ session_id: 's', event_id: 'e2' }],
      forks: [{ kind: 'sequence_regression', message: 'm', at_ms: 7 }],
    }),
  ].join('\n');
  const p = parsePythonClientOutput(out);
  assert.equal(p.initialized, true);
  assert.deepEqual(p.settled, [
    { attempt: 2, outcome: 'error' },
    { attempt: 1, outcome: 'timeout' },
  ]);
  assert.deepEqual(p.summary?.calls[0], {
    attempt: 1,
    startedAtMs: 50,
    settledAtMs: 3050,
    durationMs: 3000,
    outcome: 'timeout',
    progress: 4,
    error: { source: 'call', name: 'MCPError', message: "Request 'tools/call' timed out", code: -32001 },
  });
  assert.equal(p.summary?.calls[1]?.outcome, 'pending');
  assert.deepEqual(p.summary?.droppedByDedup, [{ sessionId: 's', eventId: 'e2' }]);
  assert.deepEqual(p.summary?.forks, [{ kind: 'sequence_regression', message: 'm', atMs: 7 }]);
  // The guarded client has no app dedup: null, not an empty list.
  assert.equal(parsePythonClientOutput('{"calls": [], "dropped_by_dedup": null, "forks": []}').summary?.droppedByDedup, null);
  assert.equal(parsePythonClientOutput('{"initialized": true}\n').summary, undefined);
});

test('droppedOnWire: the n-th drop of a pair is its (n+1)-th arrival on the wire', () => {
  const ev = (eventId: string, kind: 'request' | 'response' | 'notification', id?: string): TappedEvent => ({
    sessionId: 's',
    eventId,
    info: { kind, ...(id !== undefined ? { id } : {}) } as TappedEvent['info'],
    exchange: 0,
    at: 0,
  });
  const events = [ev('e1', 'notification'), ev('e2', 'response', '1'), ev('e1', 'notification'), ev('e2', 'response', '2'), ev('e2', 'notification')];
  const got = droppedOnWire(
    [
      { sessionId: 's', eventId: 'e2' },
      { sessionId: 's', eventId: 'e2' },
      { sessionId: 's', eventId: 'e9' },
    ],
    events,
  );
  assert.equal(got[0]?.event, events[3]);
  assert.equal(got[1]?.event, events[4]);
  assert.deepEqual(got[2], { eventId: 'e9' });
});

test('pythonClientNotPlayable: the seed partition on sessionful paths serving slow_report only', () => {
  const cell = (path: string, server: CorpusServer, client: CorpusClient, fault: CorpusFault): CorpusCell => ({
    path: CORPUS_PATHS.find((p) => p.name === path)!,
    server,
    client,
    fault,
    seed: 1,
    id: 'x',
  });
  assert.equal(pythonClientNotPlayable(cell('sdk-1.x', 'naive', 'python-instrumented', 'cut-reap')), undefined);
  assert.equal(pythonClientNotPlayable(cell('sdk-2.x', 'guarded', 'python-guarded', 'cut-healthy')), undefined);
  assert.equal(pythonClientNotPlayable(cell('sdk-1.x', 'naive', 'stock', 'idle-reaped')), undefined);
  assert.match(pythonClientNotPlayable(cell('sdk-1.x', 'naive', 'python-instrumented', 'idle-reaped'))!, /partition only/);
  assert.match(pythonClientNotPlayable(cell('sdk-1.x', 'guarded', 'python-guarded', 'server-restart'))!, /partition only/);
  assert.match(pythonClientNotPlayable(cell('stateless/sdk-1.x', 'stateless', 'python-instrumented', 'cut'))!, /stateless/);
  assert.match(pythonClientNotPlayable(cell('proxy/everything', 'everything', 'python-instrumented', 'cut-healthy'))!, /slow_report/);
});

test('forwardedRequestHeaders drops hop-by-hop and framing headers, keeps the MCP ones', () => {
  assert.deepEqual(
    forwardedRequestHeaders({ host: 'a', connection: 'keep-alive', 'content-length': '3', 'mcp-session-id': 's', 'last-event-id': 'e7', 'x-multi': ['a', 'b'] }),
    { 'mcp-session-id': 's', 'last-event-id': 'e7', 'x-multi': 'a, b' },
  );
});

test('the tap forwarder records exchanges and id-bearing events, and cuts the client when the upstream stream breaks', async () => {
  let cut!: () => void;
  const upstream = http.createServer((req, res) => {
    if (req.method === 'POST') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 'sess-1' });
      res.write('id: e1\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n\n');
      res.write(': keep-alive\n\n');
      res.write('id: e2\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}\n\n');
      cut = () => res.socket?.destroy();
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const port = (upstream.address() as AddressInfo).port;
  const seen: string[] = [];
  const fwd = await startTapForwarder(`http://127.0.0.1:${port}/`, { onEvent: (e) => seen.push(e.eventId) });
  try {
    const res = await fetch(fwd.url('/mcp'), { method: 'POST', headers: { 'content-type': 'application/json', 'mcp-session-id': 'sess-1' }, body: '{}' });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('mcp-session-id'), 'sess-1');
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('id: e2')) text += new TextDecoder().decode((await reader.read()).value);
    assert.match(text, /: keep-alive/);
    cut();
    await assert.rejects(async () => {
      for (;;) if ((await reader.read()).done) return;
    });
    const miss = await fetch(fwd.url('/mcp'), { headers: { 'mcp-session-id': 'sess-1', 'last-event-id': 'e2' } });
    assert.equal(miss.status, 404);
    await miss.text();
    assert.deepEqual(seen, ['e1', 'e2']);
    assert.deepEqual(
      fwd.tap.exchanges.map((x) => [x.method, x.sessionId, x.answeredSessionId, x.lastEventId, x.status]),
      [
        ['POST', 'sess-1', 'sess-1', undefined, 200],
        ['GET', 'sess-1', undefined, 'e2', 404],
      ],
    );
    assert.deepEqual(
      fwd.tap.events.map((e) => [e.sessionId, e.eventId, e.info.method, e.exchange]),
      [
        ['sess-1', 'e1', 'notifications/progress', 0],
        ['sess-1', 'e2', 'notifications/progress', 0],
      ],
    );
  } finally {
    await fwd.close();
    upstream.closeAllConnections();
    await new Promise<void>((r) => upstream.close(() => r()));
  }
});
