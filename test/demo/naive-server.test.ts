import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startNaiveServer } from '../../src/demo/naive-server.js';
import { SLOW_REPORT_TOOL } from '../../src/demo/slow-report-tool.js';

const sseGet = (url: string, sessionId: string, lastEventId?: string): Promise<Response> =>
  fetch(url, {
    headers: {
      accept: 'text/event-stream',
      'mcp-session-id': sessionId,
      'mcp-protocol-version': '2025-11-25',
      ...(lastEventId ? { 'last-event-id': lastEventId } : {}),
    },
  });

test('serves slow_report with progress to a stock SDK client, then reaps the idle session', { timeout: 30_000 }, async () => {
  // The reaper runs in this process: 1 s of idleness, so a slow event loop between the result
  // and the next line cannot reap the session before it is counted.
  const server = await startNaiveServer({ reapAfterMs: 1000, steps: 3, stepMs: 5 });
  const client = new Client({ name: 't', version: '1' });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    let progress = 0;
    const res = await client.callTool({ name: SLOW_REPORT_TOOL, arguments: { topic: 'x' } }, undefined, { onprogress: () => progress++ });
    assert.equal(progress, 3);
    const run = server.observations.runs[0]!;
    assert.equal((res.content as Array<{ text: string }>)[0]!.text, run.resultText);
    assert.equal(run.progressSent, 3);
    assert.deepEqual(server.observations.created.map((c) => c.by), ['initialize']);
    assert.equal(server.activeSessions(), 1);
    const deadline = Date.now() + 10_000;
    while (server.reapedCount() === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.equal(server.reapedCount(), 1);
    assert.equal(server.activeSessions(), 0);
    // initialize: priming + response; tools/call: priming + 3 progress + result.
    assert.equal(server.observations.reaped[0]!.eventsEvicted, 7);
  } finally {
    await client.close();
    await server.close();
  }
});

test('rehydrates an unknown session id on a resume and answers 200 (the fork)', { timeout: 30_000 }, async () => {
  const server = await startNaiveServer({ reapAfterMs: 1000 });
  try {
    const res = await sseGet(server.url, 'ghost-session', 'e7');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('mcp-session-id'), 'ghost-session');
    await res.body?.cancel();
    assert.deepEqual(
      server.observations.created.map((c) => [c.sessionId, c.by, c.method, c.lastEventId, c.life]),
      [['ghost-session', 'rehydrate', 'GET', 'e7', 1]],
    );
    assert.deepEqual(server.observations.answered.map((a) => a.status), [200]);
  } finally {
    await server.close();
  }
});

test('with rehydrate off it answers 404 like the SDK, allocating nothing', { timeout: 30_000 }, async () => {
  const server = await startNaiveServer({ rehydrate: false });
  try {
    const res = await sseGet(server.url, 'ghost-session', 'e7');
    assert.equal(res.status, 404);
    assert.equal(((await res.json()) as { error: { code: number } }).error.code, -32001);
    assert.equal(server.activeSessions(), 0);
    assert.deepEqual(server.observations.created, []);
  } finally {
    await server.close();
  }
});
