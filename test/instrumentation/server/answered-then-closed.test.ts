/**
 * A long call answered, then the session closed at once (DELETE) or reaped: the server's
 * `forkwatch.request.received` went out while the call ran (it outlived `requestSpanDelayMs`), so
 * its answer must go out too. Found by the fleet bench: the answer stayed in the incarnation's
 * buffer, the DELETE dropped the buffer, and the detector saw a received request, a session end and
 * no answer: a false `orphaned_progress_token` until the client's own settle arrived (and for good
 * with a stock client). Real SDK client and server over loopback HTTP.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createServerInstrumentation } from '../../../packages/instrumentation/src/server/server-instrumentation.js';
import {
  ATTR_JSONRPC_KIND,
  ATTR_JSONRPC_REQUEST_ID,
  SPAN_REQUEST_RECEIVED,
  SPAN_SESSION_ENDED,
  SPAN_SSE_EVENT,
} from '../../../packages/instrumentation/src/semconv.js';
import { attr, listen, tracing } from './harness.js';
import { SALT, naiveApp, waitFor } from './naive-app.js';

async function answeredThenClosed(close: 'delete' | 'server-close') {
  const t = tracing();
  const inst = createServerInstrumentation({ tracerProvider: t.provider, salt: SALT, requestSpanDelayMs: 50 });
  let release!: () => void;
  const app = naiveApp(inst, 'reject400', { proceed: new Promise<void>((r) => (release = r)) });
  const srv = await listen(app.handler);
  const client = new Client({ name: 'c', version: '1' });
  try {
    const transport = new StreamableHTTPClientTransport(srv.url);
    await client.connect(transport);
    let progressed = false;
    const call = client.callTool({ name: 'slow', arguments: {} }, undefined, { onprogress: () => void (progressed = true) });
    // The call outlives the delay: its request.received is out before it is answered.
    await waitFor(() => progressed && t.spans(SPAN_REQUEST_RECEIVED).length === 2);
    release();
    const result = (await call) as { content: Array<{ text: string }> };
    assert.equal(result.content[0]!.text, 'done');
    if (close === 'delete') await transport.terminateSession();
    else for (const tr of app.transports.values()) await tr.close();
    await waitFor(() => t.spans(SPAN_SESSION_ENDED).length === 1);
    return t;
  } finally {
    release();
    await client.close().catch(() => undefined);
    await srv.close();
  }
}

function assertAnswerEmitted(t: ReturnType<typeof tracing>): void {
  const callId = attr(t.spans(SPAN_REQUEST_RECEIVED)[1]!, ATTR_JSONRPC_REQUEST_ID);
  const names = t.spans().map((s) => s.name);
  const answer = t.spans().findIndex((s) => s.name === SPAN_SSE_EVENT && attr(s, ATTR_JSONRPC_KIND) === 'response' && attr(s, ATTR_JSONRPC_REQUEST_ID) === callId);
  assert.ok(answer >= 0, `the answer to request ${String(callId)} was emitted: ${names.join(', ')}`);
  assert.ok(answer < names.indexOf(SPAN_SESSION_ENDED), 'the answer, then the end');
}

describe('server instrumentation: a request whose received span went out has its answer emitted', { timeout: 20_000 }, () => {
  it('answered, then DELETE at once: the answer event is out before session.ended', async () => {
    assertAnswerEmitted(await answeredThenClosed('delete'));
  });

  it('answered, then the server closes the session: the answer event is out before session.ended', async () => {
    assertAnswerEmitted(await answeredThenClosed('server-close'));
  });
});
