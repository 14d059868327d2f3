/** What the server instrumentation records of a healthy session: requests, SSE events, resumes, late requests. */
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createServerInstrumentation } from '../../../packages/instrumentation/src/server/server-instrumentation.js';
import { payloadDigest, sessionKey } from '../../../packages/instrumentation/src/common/session-key.js';
import {
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GUARDED,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_JSONRPC_KIND,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_METHOD_NAME,
  ATTR_MCP_SESSION_ID,
  ATTR_PROGRESS_TOKEN,
  ATTR_RESUME_LAST_EVENT_FOUND,
  ATTR_RESUME_OUTCOME,
  ATTR_SESSION_CLIENT_SUPPLIED_ID,
  ATTR_SESSION_CREATED_BY,
  ATTR_SESSION_END_REASON,
  ATTR_SESSION_INCARNATION,
  ATTR_SESSION_INCARNATION_SOURCE,
  ATTR_SESSION_KEY,
  ATTR_SIDE,
  ATTR_SSE_EVENT_ID,
  ATTR_SSE_EVENT_SEQ,
  ATTR_SSE_EVENT_SEQ_SOURCE,
  ATTR_SSE_PAYLOAD_BYTES,
  ATTR_SSE_PAYLOAD_DIGEST,
  ATTR_SSE_REPLAYED,
  SPAN_REQUEST_RECEIVED,
  SPAN_RESUME,
  SPAN_SESSION_CREATED,
  SPAN_SESSION_ENDED,
  SPAN_SSE_EVENT,
} from '../../../packages/instrumentation/src/semconv.js';
import {
  attr,
  INIT_BODY,
  listen,
  makeMcpServer,
  parseSse,
  postHeaders,
  tracing,
  type ToolControl,
} from './harness.js';
import { SALT, naiveApp, waitFor, recordingFetch, cuttingFetch } from './naive-app.js';

describe('server instrumentation', { timeout: 20_000 }, () => {
  it('records initialize, requests and SSE events with keys, seqs and digests', async () => {
    const t = tracing();
    const inst = createServerInstrumentation({ tracerProvider: t.provider, salt: SALT, requestSpanDelayMs: 0 });
    const app = naiveApp(inst, 'reject400');
    const srv = await listen(app.handler);
    const bodies: string[] = [];
    const transport = new StreamableHTTPClientTransport(srv.url, { fetch: recordingFetch(bodies) });
    const client = new Client({ name: 'c', version: '1' });
    try {
      await client.connect(transport);
      const sid = transport.sessionId;
      assert.ok(sid);
      const out = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
      assert.deepEqual(out.content, [{ type: 'text', text: 'hi' }]);
      await waitFor(() => bodies.length >= 2);

      const created = t.spans(SPAN_SESSION_CREATED);
      assert.equal(created.length, 1);
      const c = created[0]!;
      assert.equal(attr(c, ATTR_SESSION_CREATED_BY), 'initialize');
      assert.equal(attr(c, ATTR_SESSION_CLIENT_SUPPLIED_ID), false);
      assert.equal(attr(c, ATTR_SESSION_INCARNATION_SOURCE), 'observed');
      assert.match(String(attr(c, ATTR_SESSION_INCARNATION)), /^[0-9a-f]{16}$/);
      const inc = attr(c, ATTR_SESSION_INCARNATION);

      const key = sessionKey(sid, SALT);
      for (const s of t.spans()) {
        assert.equal(attr(s, ATTR_SESSION_KEY), key, s.name);
        assert.equal(attr(s, ATTR_MCP_SESSION_ID), undefined, 'raw id must not be recorded by default');
        assert.equal(attr(s, ATTR_SIDE), 'server');
        assert.equal(attr(s, ATTR_GUARDED), false);
        assert.equal(attr(s, ATTR_SESSION_INCARNATION), inc, s.name);
      }

      const received = t.spans(SPAN_REQUEST_RECEIVED);
      assert.deepEqual(
        received.map((s) => attr(s, ATTR_MCP_METHOD_NAME)),
        ['initialize', 'tools/call'],
      );
      assert.equal(attr(received[1]!, ATTR_GEN_AI_TOOL_NAME), 'echo');

      // Every event with an id the client received has a span with the digest of its data.
      const events = t.spans(SPAN_SSE_EVENT);
      const wire = bodies.flatMap(parseSse).filter((e) => e.id !== undefined);
      assert.equal(events.length, wire.length);
      assert.ok(wire.length >= 4, 'priming + response per POST');
      for (const w of wire) {
        const s = events.find((e) => attr(e, ATTR_SSE_EVENT_ID) === w.id);
        assert.ok(s, `span for ${w.id}`);
        assert.equal(attr(s, ATTR_SSE_PAYLOAD_DIGEST), payloadDigest(w.data));
        assert.equal(attr(s, ATTR_SSE_PAYLOAD_BYTES), Buffer.byteLength(w.data));
        assert.equal(attr(s, ATTR_SSE_REPLAYED), false);
        assert.equal(attr(s, ATTR_SSE_EVENT_SEQ_SOURCE), 'observed');
      }
      assert.deepEqual(
        events.map((e) => attr(e, ATTR_SSE_EVENT_SEQ)),
        events.map((_, i) => i + 1),
      );
      const response = events.find((e) => attr(e, ATTR_JSONRPC_KIND) === 'response' && attr(e, ATTR_JSONRPC_REQUEST_ID) === '1');
      assert.ok(response, 'the tools/call response event');
      assert.equal(events.filter((e) => attr(e, ATTR_JSONRPC_KIND) === 'none').length, 2, 'two priming events');

      await transport.terminateSession();
      const ended = t.spans(SPAN_SESSION_ENDED);
      assert.equal(ended.length, 1);
      assert.equal(attr(ended[0]!, ATTR_SESSION_END_REASON), 'closed_by_client');
      assert.equal(attr(ended[0]!, ATTR_SESSION_INCARNATION), inc);
    } finally {
      await client.close();
      await srv.close();
    }
  });

  it('records a healthy resume: replayed=true, outcome resumed, last_event_found', async () => {
    const t = tracing();
    const inst = createServerInstrumentation({ tracerProvider: t.provider, salt: SALT });
    let release!: () => void;
    const control: ToolControl = { proceed: new Promise<void>((r) => (release = r)) };
    const app = naiveApp(inst, 'reject400', control);
    const srv = await listen(app.handler);
    const transport = new StreamableHTTPClientTransport(srv.url, {
      fetch: cuttingFetch(() => release()),
      reconnectionOptions: { initialReconnectionDelay: 10, maxReconnectionDelay: 50, reconnectionDelayGrowFactor: 1, maxRetries: 5 },
    });
    const client = new Client({ name: 'c', version: '1' });
    try {
      client.onerror = () => undefined;
      await client.connect(transport);
      let progress = 0;
      const out = await client.callTool({ name: 'slow', arguments: {} }, undefined, { onprogress: () => progress++, timeout: 8000 });
      assert.deepEqual(out.content, [{ type: 'text', text: 'done' }]);
      await waitFor(() => t.spans(SPAN_RESUME).length > 0);
      // The replayed event's span ends after the tool result reached the client: wait for it.
      const progressSpans = () => t.spans(SPAN_SSE_EVENT).filter((e) => attr(e, ATTR_MCP_METHOD_NAME) === 'notifications/progress');
      await waitFor(() => progressSpans().length >= 2, 20_000);

      const resume = t.spans(SPAN_RESUME)[0]!;
      assert.equal(attr(resume, ATTR_RESUME_OUTCOME), 'resumed');
      assert.equal(attr(resume, ATTR_HTTP_RESPONSE_STATUS_CODE), 200);
      assert.equal(attr(resume, ATTR_RESUME_LAST_EVENT_FOUND), true);
      const created = t.spans(SPAN_SESSION_CREATED);
      assert.equal(created.length, 1, 'a resume on a live transport creates nothing');
      assert.equal(attr(resume, ATTR_SESSION_INCARNATION), attr(created[0]!, ATTR_SESSION_INCARNATION));

      // The progress event was sent on the cut stream and sent again on the resumed one.
      const progressEvents = progressSpans();
      assert.equal(progressEvents.length, 2);
      assert.deepEqual(progressEvents.map((e) => attr(e, ATTR_SSE_REPLAYED)), [false, true]);
      assert.equal(attr(progressEvents[0]!, ATTR_SSE_EVENT_ID), attr(progressEvents[1]!, ATTR_SSE_EVENT_ID));
      assert.equal(attr(progressEvents[0]!, ATTR_SSE_EVENT_SEQ), attr(progressEvents[1]!, ATTR_SSE_EVENT_SEQ));
      assert.equal(attr(progressEvents[0]!, ATTR_SSE_PAYLOAD_DIGEST), attr(progressEvents[1]!, ATTR_SSE_PAYLOAD_DIGEST));
      assert.ok(attr(progressEvents[0]!, ATTR_PROGRESS_TOKEN) !== undefined);
      assert.equal(progress, 1, 'the client saw the replayed progress once');
    } finally {
      await client.close();
      await srv.close();
    }
  });


  it('holds request.received back: none for a call answered in time, stamped with its arrival when late or when the session ends', async () => {
    const t = tracing();
    const inst = createServerInstrumentation({ tracerProvider: t.provider, salt: SALT, requestSpanDelayMs: 150 });
    let release!: () => void;
    const app = naiveApp(inst, 'reject400', { proceed: new Promise<void>((r) => (release = r)) });
    const srv = await listen(app.handler);
    const transport = new StreamableHTTPClientTransport(srv.url);
    const client = new Client({ name: 'c', version: '1' });
    try {
      await client.connect(transport);
      await client.callTool({ name: 'echo', arguments: { text: 'fast' } });
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(
        t.spans(SPAN_REQUEST_RECEIVED).map((s) => attr(s, ATTR_MCP_METHOD_NAME)),
        ['initialize'],
        'initialize at once; the answered echo never',
      );
      const sentAt = Date.now();
      const slow = client.callTool({ name: 'slow', arguments: {} });
      await waitFor(() => t.spans(SPAN_REQUEST_RECEIVED).length === 2);
      const late = t.spans(SPAN_REQUEST_RECEIVED)[1]!;
      assert.equal(attr(late, ATTR_GEN_AI_TOOL_NAME), 'slow');
      const startMs = late.startTime[0] * 1000 + late.startTime[1] / 1e6;
      assert.ok(Math.abs(startMs - sentAt) < 100, `stamped with its arrival (${startMs - sentAt} ms off)`);
      release();
      await slow;

      // A request still unanswered when its session ends is emitted before session.ended.
      let release2!: () => void;
      const app2 = naiveApp(inst, 'reject400', { proceed: new Promise<void>((r) => (release2 = r)) });
      const srv2 = await listen(app2.handler);
      const transport2 = new StreamableHTTPClientTransport(srv2.url);
      const client2 = new Client({ name: 'c2', version: '1' });
      try {
        await client2.connect(transport2);
        const before = t.spans(SPAN_REQUEST_RECEIVED).length;
        const pending = client2.callTool({ name: 'slow', arguments: {} }, undefined, { timeout: 500 }).catch(() => undefined);
        await new Promise((r) => setTimeout(r, 50));
        assert.equal(t.spans(SPAN_REQUEST_RECEIVED).length, before, 'still held');
        for (const tr of app2.transports.values()) await tr.close();
        const names = t.spans().map((s) => s.name);
        assert.equal(t.spans(SPAN_REQUEST_RECEIVED).length, before + 1);
        assert.ok(names.lastIndexOf(SPAN_REQUEST_RECEIVED) < names.lastIndexOf(SPAN_SESSION_ENDED), 'received, then ended');
        release2();
        await pending;
      } finally {
        await client2.close().catch(() => undefined);
        await srv2.close();
      }
    } finally {
      release();
      await client.close();
      for (const tr of app.transports.values()) await tr.close();
      await srv.close();
    }
  });

  it('adopts a transport observed late without reporting a creation it did not see', async () => {
    const t = tracing();
    const inst = createServerInstrumentation({ tracerProvider: t.provider, requestSpanDelayMs: 0 });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID });
    await makeMcpServer().connect(transport);
    let calls = 0;
    const srv = await listen((req, res) => (calls++ === 0 ? transport : inst.observeTransport(transport)).handleRequest(req, res));
    try {
      const init = await fetch(srv.url, { method: 'POST', headers: postHeaders(), body: JSON.stringify(INIT_BODY) });
      await init.text();
      const sid = init.headers.get('mcp-session-id')!;
      const res = await fetch(srv.url, { method: 'POST', headers: postHeaders(sid), body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
      await res.text();
      assert.equal(t.spans(SPAN_SESSION_CREATED).length, 0);
      const received = t.spans(SPAN_REQUEST_RECEIVED);
      assert.equal(received.length, 1);
      assert.match(String(attr(received[0]!, ATTR_SESSION_INCARNATION)), /^[0-9a-f]{16}$/);
    } finally {
      await transport.close();
      await srv.close();
    }
  });

});
