/**
 * The client's `notifications/cancelled` on a sessionful SDK 1.x server: the client no longer waits,
 * so the session's later end must not read as the request's orphaning (issue 24, an app cancelling
 * its own call on an in-process server with a stock client was reported `orphaned_progress_token`).
 * Real SDK client and server over loopback HTTP.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createServerInstrumentation } from '../../../packages/instrumentation/src/server/server-instrumentation.js';
import {
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_METHOD_NAME,
  ATTR_REQUEST_DURATION_MS,
  ATTR_REQUEST_OUTCOME,
  ATTR_SIDE,
  SPAN_REQUEST_RECEIVED,
  SPAN_REQUEST_SETTLED,
  SPAN_SESSION_ENDED,
} from '../../../packages/instrumentation/src/semconv.js';
import { INIT_BODY, attr, listen, postHeaders, tracing } from './harness.js';
import { SALT, naiveApp, waitFor } from './naive-app.js';

/** Calls `slow` (it waits after its first progress notification) and aborts it once `when()` holds after that progress. */
async function cancelledCall(requestSpanDelayMs: number, when: (t: ReturnType<typeof tracing>) => boolean) {
  const t = tracing();
  const inst = createServerInstrumentation({ tracerProvider: t.provider, salt: SALT, requestSpanDelayMs });
  let release!: () => void;
  const app = naiveApp(inst, 'reject400', { proceed: new Promise<void>((r) => (release = r)) });
  const srv = await listen(app.handler);
  const client = new Client({ name: 'c', version: '1' });
  try {
    // The SDK server hands a notification-only POST to onmessage before it answers 202.
    let cancelAnswered = false;
    const tapFetch: typeof fetch = async (url, init) => {
      const res = await fetch(url, init);
      if (typeof init?.body === 'string' && init.body.includes('notifications/cancelled')) cancelAnswered = true;
      return res;
    };
    await client.connect(new StreamableHTTPClientTransport(srv.url, { fetch: tapFetch }));
    const ac = new AbortController();
    let progressed = false;
    const call = client.callTool({ name: 'slow', arguments: {} }, undefined, { signal: ac.signal, onprogress: () => void (progressed = true) }).catch(() => 'aborted');
    await waitFor(() => progressed && when(t));
    ac.abort(new Error('the app cancelled the call'));
    assert.equal(await call, 'aborted');
    await waitFor(() => cancelAnswered);
    for (const tr of app.transports.values()) await tr.close();
    await waitFor(() => t.spans(SPAN_SESSION_ENDED).length === 1);
    return t;
  } finally {
    release();
    await client.close().catch(() => undefined);
    await srv.close();
  }
}

describe('server instrumentation: the client cancels a request', { timeout: 20_000 }, () => {
  it('cancelled while still held (within requestSpanDelayMs): no request.received when the session then ends', async () => {
    const t = await cancelledCall(10_000, () => true);
    assert.deepEqual(
      t.spans(SPAN_REQUEST_RECEIVED).map((s) => attr(s, ATTR_JSONRPC_REQUEST_ID)),
      ['0'],
      'initialize only: the cancelled call was no longer pending when the session ended',
    );
  });

  it('cancelled after its request.received went out: a server-side request.settled (cancelled) before session.ended', async () => {
    const t = await cancelledCall(50, (x) => x.spans(SPAN_REQUEST_RECEIVED).length === 2);
    const settled = t.spans(SPAN_REQUEST_SETTLED);
    assert.equal(settled.length, 1);
    assert.equal(attr(settled[0]!, ATTR_SIDE), 'server');
    assert.equal(attr(settled[0]!, ATTR_REQUEST_OUTCOME), 'cancelled');
    assert.equal(attr(settled[0]!, ATTR_MCP_METHOD_NAME), 'tools/call');
    const ms = attr(settled[0]!, ATTR_REQUEST_DURATION_MS);
    assert.ok(typeof ms === 'number' && ms >= 50, `duration from the request's arrival: ${String(ms)}`);
    assert.equal(attr(settled[0]!, ATTR_JSONRPC_REQUEST_ID), attr(t.spans(SPAN_REQUEST_RECEIVED)[1]!, ATTR_JSONRPC_REQUEST_ID));
    const names = t.spans().map((s) => s.name);
    assert.ok(names.indexOf(SPAN_REQUEST_SETTLED) < names.indexOf(SPAN_SESSION_ENDED), 'settled, then ended');
  });

  it('cancelled after its answer (the SDK client cancels on its own timeout): no request.settled', async () => {
    // The conformance 409 run: the call was answered while the client was cut off, then its
    // timeout's cancel came; the settled span went out without the method and duration the doc requires.
    const t = tracing();
    const inst = createServerInstrumentation({ tracerProvider: t.provider, salt: SALT, requestSpanDelayMs: 50 });
    let release!: () => void;
    const app = naiveApp(inst, 'reject400', { proceed: new Promise<void>((r) => (release = r)) });
    const srv = await listen(app.handler);
    try {
      const init = await fetch(srv.url, { method: 'POST', headers: postHeaders(), body: JSON.stringify(INIT_BODY) });
      const sid = init.headers.get('mcp-session-id') ?? undefined;
      await init.text();
      await (await fetch(srv.url, { method: 'POST', headers: postHeaders(sid), body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).text();
      const call = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'slow', arguments: {}, _meta: { progressToken: 'p7' } } };
      const answer = fetch(srv.url, { method: 'POST', headers: postHeaders(sid), body: JSON.stringify(call) }).then((r) => r.text());
      await waitFor(() => t.spans(SPAN_REQUEST_RECEIVED).length === 2);
      release();
      assert.match(await answer, /"id":7/);
      const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7, reason: 'timeout' } };
      assert.equal((await fetch(srv.url, { method: 'POST', headers: postHeaders(sid), body: JSON.stringify(cancel) })).status, 202);
      for (const tr of app.transports.values()) await tr.close();
      await waitFor(() => t.spans(SPAN_SESSION_ENDED).length === 1);
      assert.deepEqual(t.spans(SPAN_REQUEST_SETTLED), []);
    } finally {
      release();
      await srv.close();
    }
  });
});
