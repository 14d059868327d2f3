import { randomUUID } from 'node:crypto';
import { IncomingMessage, request as httpRequest, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { propagation, type TracerProvider } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { createServerInstrumentation } from '../../../packages/instrumentation/src/server/server-instrumentation.js';
import type { ServerInstrumentation } from '../../../packages/instrumentation/src/server/types.js';
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
  ATTR_RESUME_LAST_EVENT_ID,
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
import { attr, INIT_BODY, listen, makeMcpServer, parseSse, postHeaders, tracing, type ToolControl } from './harness.js';

const SALT = 'test-salt';

/** The naive `transports[sessionId]` app of the SDK examples, instrumented. */
function naiveApp(inst: ServerInstrumentation, unknown: 'reject400' | 'rehydrate' | 'rehydrate-init', control: ToolControl = {}) {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  // One store for all transports, as in the SDK example: what makes a rehydrated replay possible.
  const store = new InMemoryEventStore();
  const handler = inst.wrapHandler(async (req: IncomingMessage, res: ServerResponse) => {
    const sid = req.headers['mcp-session-id'] as string | undefined;
    const existing = sid ? transports.get(sid) : undefined;
    if (existing) return existing.handleRequest(req, res);
    if (!sid && req.method === 'POST') {
      const t: StreamableHTTPServerTransport = inst.observeTransport(
        new StreamableHTTPServerTransport({
          sessionIdGenerator: randomUUID,
          eventStore: store,
          onsessioninitialized: (id) => void transports.set(id, t),
        }),
      );
      t.onclose = () => {
        if (t.sessionId && transports.get(t.sessionId) === t) transports.delete(t.sessionId);
      };
      await makeMcpServer(control).connect(t);
      return t.handleRequest(req, res);
    }
    if (unknown === 'reject400' || !sid) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: No valid session ID provided' }, id: null }));
      return;
    }
    // The "rehydrate after restart" pattern: a new transport under the client's old id. The fork.
    const t = inst.observeTransport(new StreamableHTTPServerTransport({ sessionIdGenerator: () => sid, eventStore: store }));
    if (unknown === 'rehydrate-init') {
      // Variant: feed the new transport a synthetic initialize, so it believes it was initialized.
      transports.set(sid, t);
      await makeMcpServer(control).connect(t);
      const fake = syntheticRequest();
      await t.handleRequest(fake.req, fake.res, INIT_BODY);
      return t.handleRequest(req, res);
    }
    const inner = (t as unknown as { _webStandardTransport: { sessionId?: string; _initialized: boolean } })._webStandardTransport;
    inner.sessionId = sid;
    inner._initialized = true;
    transports.set(sid, t);
    await makeMcpServer(control).connect(t);
    return t.handleRequest(req, res);
  });
  return { handler, transports };
}

/** An in-process POST request/response pair that no socket ever carried. */
function syntheticRequest(): { req: IncomingMessage; res: ServerResponse } {
  const req = new IncomingMessage(new Socket());
  const headers = { host: 'localhost', 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  req.method = 'POST';
  req.url = '/mcp';
  req.headers = headers;
  req.rawHeaders = Object.entries(headers).flat();
  req.push(null);
  return { req, res: new ServerResponse(req) };
}

async function waitFor(cond: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A fetch that keeps a copy of every SSE body of a POST (clone: the client reads its own). */
function recordingFetch(bodies: string[]): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    if (init?.method === 'POST' && res.headers.get('content-type')?.includes('text/event-stream')) {
      void res
        .clone()
        .text()
        .then((t) => bodies.push(t), () => undefined);
    }
    return res;
  };
}

/**
 * A fetch that cuts the first `tools/call` SSE stream client-side: it forwards the first event
 * (the priming event), lets the second arrive (so the server has sent it), drops it and errors
 * the stream. The SDK client then reconnects with Last-Event-ID = the priming id.
 */
function cuttingFetch(onCut: () => void): typeof fetch {
  let armed = true;
  return async (input, init) => {
    const res = await fetch(input, init);
    const isCall = typeof init?.body === 'string' && init.body.includes('"tools/call"');
    if (!armed || !isCall || !res.body || !res.headers.get('content-type')?.includes('text/event-stream')) return res;
    armed = false;
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    const encoder = new TextEncoder();
    let buf = '';
    let forwarded = false;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        for (;;) {
          if (!forwarded || !buf.includes('\n\n')) {
            const { value, done } = await reader.read();
            if (done) {
              controller.close();
              return;
            }
            buf += decoder.decode(value, { stream: true });
          }
          const blocks = buf.split('\n\n');
          if (!forwarded && blocks.length > 1) {
            controller.enqueue(encoder.encode(`${blocks[0]}\n\n`));
            forwarded = true;
            buf = blocks.slice(1).join('\n\n');
            return;
          }
          if (forwarded && buf.includes('\n\n')) {
            await reader.cancel();
            controller.error(new Error('cut by test'));
            onCut();
            return;
          }
        }
      },
    });
    return new Response(body, { status: res.status, headers: res.headers });
  };
}

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

  it('flags a rehydrating handler: created_by GET, client_supplied_id, outcome forked', async () => {
    const t = tracing();
    const inst = createServerInstrumentation({ tracerProvider: t.provider, salt: SALT });
    const app = naiveApp(inst, 'rehydrate');
    const srv = await listen(app.handler);
    const transport = new StreamableHTTPClientTransport(srv.url, {
      reconnectionOptions: { initialReconnectionDelay: 10, maxReconnectionDelay: 10, reconnectionDelayGrowFactor: 1, maxRetries: 0 },
    });
    const client = new Client({ name: 'c', version: '1' });
    client.onerror = () => undefined;
    try {
      await client.connect(transport);
      const sid = transport.sessionId!;
      let token: string | undefined;
      await client.callTool({ name: 'echo', arguments: { text: 'x' } }, undefined, { onresumptiontoken: (tk) => (token = tk) });
      assert.ok(token);

      // The app's reaper evicts the session.
      inst.markEnded(sid, 'reaped_idle');
      await app.transports.get(sid)!.close();
      const ended = t.spans(SPAN_SESSION_ENDED);
      assert.equal(ended.length, 1);
      assert.equal(attr(ended[0]!, ATTR_SESSION_END_REASON), 'reaped_idle');

      await transport.resumeStream(token);
      await waitFor(() => t.spans(SPAN_RESUME).length > 0);

      const created = t.spans(SPAN_SESSION_CREATED);
      assert.equal(created.length, 2);
      const fork = created[1]!;
      assert.equal(attr(fork, ATTR_SESSION_CREATED_BY), 'GET');
      assert.equal(attr(fork, ATTR_SESSION_CLIENT_SUPPLIED_ID), true);
      assert.equal(attr(fork, ATTR_RESUME_LAST_EVENT_ID), token);
      assert.equal(attr(fork, ATTR_SESSION_KEY), attr(created[0]!, ATTR_SESSION_KEY), 'same id, same key');
      assert.notEqual(attr(fork, ATTR_SESSION_INCARNATION), attr(created[0]!, ATTR_SESSION_INCARNATION));

      const resume = t.spans(SPAN_RESUME)[0]!;
      assert.equal(attr(resume, ATTR_RESUME_OUTCOME), 'forked');
      assert.equal(attr(resume, ATTR_RESUME_LAST_EVENT_FOUND), false);
      assert.equal(attr(resume, ATTR_SESSION_INCARNATION), attr(fork, ATTR_SESSION_INCARNATION));
    } finally {
      await client.close();
      await srv.close();
    }
  });

  it('still credits the real request when finished requests filled the presenting map to maxTrackedSessions', async () => {
    const t = tracing();
    const inst = createServerInstrumentation({ tracerProvider: t.provider, salt: SALT, maxTrackedSessions: 2 });
    const app = naiveApp(inst, 'rehydrate-init');
    // Requests presenting ids that are answered at once and never make a session: they fill the map.
    const outer = inst.wrapHandler(async (req: IncomingMessage, res: ServerResponse) => {
      if (String(req.headers['mcp-session-id']).startsWith('filler-')) {
        res.writeHead(400).end();
        return;
      }
      return app.handler(req, res);
    });
    const srv = await listen(outer);
    try {
      for (const id of ['filler-1', 'filler-2']) {
        const r = await fetch(srv.url, { method: 'POST', headers: { 'mcp-session-id': id } });
        assert.equal(r.status, 400);
        await r.arrayBuffer();
      }
      const ac = new AbortController();
      const res = await fetch(srv.url, {
        headers: { accept: 'text/event-stream', 'mcp-session-id': 'client-held-id', 'mcp-protocol-version': '2025-11-25', 'last-event-id': 'e7' },
        signal: ac.signal,
      });
      assert.equal(res.status, 200);
      ac.abort();
      await waitFor(() => t.spans(SPAN_RESUME).length > 0);
      const created = t.spans(SPAN_SESSION_CREATED);
      assert.equal(created.length, 1);
      assert.equal(attr(created[0]!, ATTR_SESSION_CREATED_BY), 'GET');
    } finally {
      for (const tr of app.transports.values()) await tr.close();
      await srv.close();
    }
  });

  it('credits a synthetic initialize inside a handler to the real request (created_by GET)', async () => {
    const t = tracing();
    const inst = createServerInstrumentation({ tracerProvider: t.provider, salt: SALT });
    const app = naiveApp(inst, 'rehydrate-init');
    const srv = await listen(app.handler);
    try {
      const sid = 'client-held-id';
      const ac = new AbortController();
      const res = await fetch(srv.url, {
        headers: { accept: 'text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25', 'last-event-id': 'e7' },
        signal: ac.signal,
      });
      assert.equal(res.status, 200, 'the naive app resumed an unknown session');
      ac.abort();
      await waitFor(() => t.spans(SPAN_RESUME).length > 0);
      const created = t.spans(SPAN_SESSION_CREATED);
      assert.equal(created.length, 1);
      assert.equal(attr(created[0]!, ATTR_SESSION_CREATED_BY), 'GET');
      assert.equal(attr(created[0]!, ATTR_SESSION_CLIENT_SUPPLIED_ID), true);
      assert.equal(attr(created[0]!, ATTR_RESUME_LAST_EVENT_ID), 'e7');
      assert.equal(attr(t.spans(SPAN_RESUME)[0]!, ATTR_RESUME_OUTCOME), 'forked');
      assert.equal(t.spans(SPAN_RESUME).length, 1);
    } finally {
      for (const tr of app.transports.values()) await tr.close();
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

  it('records a handler-level 400 for an unknown session as rejected_other, creating nothing', async () => {
    const t = tracing();
    const inst = createServerInstrumentation({ tracerProvider: t.provider, salt: SALT });
    const app = naiveApp(inst, 'reject400');
    const srv = await listen(app.handler);
    try {
      const res = await fetch(srv.url, { headers: { accept: 'text/event-stream', 'mcp-session-id': 'gone', 'last-event-id': 'e7' } });
      assert.equal(res.status, 400);
      await res.text();
      const resumes = t.spans(SPAN_RESUME);
      assert.equal(resumes.length, 1);
      assert.equal(attr(resumes[0]!, ATTR_RESUME_OUTCOME), 'rejected_other');
      assert.equal(attr(resumes[0]!, ATTR_HTTP_RESPONSE_STATUS_CODE), 400);
      assert.equal(attr(resumes[0]!, ATTR_RESUME_LAST_EVENT_ID), 'e7');
      assert.equal(attr(resumes[0]!, ATTR_SESSION_KEY), sessionKey('gone', SALT));
      assert.equal(t.spans(SPAN_SESSION_CREATED).length, 0);
    } finally {
      await srv.close();
    }
  });

  describe('trace context', () => {
    before(() => propagation.setGlobalPropagator(new W3CTraceContextPropagator()));
    after(() => propagation.disable());

    it('joins the trace named by traceparent', async () => {
      const t = tracing();
      const inst = createServerInstrumentation({ tracerProvider: t.provider });
      const app = naiveApp(inst, 'reject400');
      const srv = await listen(app.handler);
      try {
        const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
        const res = await fetch(srv.url, {
          method: 'POST',
          headers: { ...postHeaders(), traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
          body: JSON.stringify(INIT_BODY),
        });
        await res.text();
        const created = t.spans(SPAN_SESSION_CREATED);
        assert.equal(created.length, 1);
        assert.equal(created[0]!.spanContext().traceId, traceId);
        assert.equal(created[0]!.parentSpanContext?.spanId, '00f067aa0ba902b7');
      } finally {
        for (const tr of app.transports.values()) await tr.close();
        await srv.close();
      }
    });
  });

  it('never breaks the server: throwing tracer provider, throwing tracer, 10 MB header', async () => {
    const throwingProvider: TracerProvider = {
      getTracer() {
        throw new Error('provider boom');
      },
    };
    const throwingTracer: TracerProvider = {
      getTracer() {
        return {
          startSpan() {
            throw new Error('span boom');
          },
          startActiveSpan() {
            throw new Error('span boom');
          },
        } as never;
      },
    };
    for (const tracerProvider of [throwingProvider, throwingTracer]) {
      const inst = createServerInstrumentation({ tracerProvider });
      const app = naiveApp(inst, 'reject400');
      const srv = await listen(app.handler);
      const client = new Client({ name: 'c', version: '1' });
      try {
        await client.connect(new StreamableHTTPClientTransport(srv.url));
        const out = await client.callTool({ name: 'echo', arguments: { text: 'still fine' } });
        assert.deepEqual(out.content, [{ type: 'text', text: 'still fine' }]);
        if (tracerProvider === throwingTracer) assert.ok(inst.failures > 0, 'failures are counted');
      } finally {
        await client.close();
        await srv.close();
      }
    }

    // A 10 MB Last-Event-ID and session id: answered, recorded cut to 256 chars.
    const t = tracing();
    const inst = createServerInstrumentation({ tracerProvider: t.provider });
    const app = naiveApp(inst, 'reject400');
    const srv = await listen(app.handler, { maxHeaderSize: 32 * 1024 * 1024 });
    try {
      const huge = 'e'.repeat(10 * 1024 * 1024);
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(srv.url, { method: 'GET', headers: { accept: 'text/event-stream', 'mcp-session-id': `s${huge}`, 'last-event-id': huge } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end();
      });
      assert.equal(status, 400);
      const resume = t.spans(SPAN_RESUME)[0]!;
      assert.equal(String(attr(resume, ATTR_RESUME_LAST_EVENT_ID)).length, 256);
    } finally {
      await srv.close();
    }
  });
});

/** Per-transport counter store (`e1, e2, ...`), replaying its whole log for a cursor it does not know. */
class CounterStore implements EventStore {
  private n = 0;
  private readonly log: Array<{ id: string; streamId: string; message: JSONRPCMessage }> = [];
  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const id = `e${++this.n}`;
    this.log.push({ id, streamId, message });
    return id;
  }
  async replayEventsAfter(lastEventId: string, { send }: { send: (id: string, m: JSONRPCMessage) => Promise<void> }): Promise<string> {
    const at = this.log.findIndex((e) => e.id === lastEventId);
    if (at < 0) {
      for (const e of this.log) await send(e.id, e.message);
      return '';
    }
    const streamId = this.log[at]!.streamId;
    for (const e of this.log.slice(at + 1)) if (e.streamId === streamId) await send(e.id, e.message);
    return streamId;
  }
}

/**
 * The seed's naive server (src/demo/naive-server.ts), instrumented the same way: the transport is
 * observed before its session id exists, the id is then forced onto it (rehydration) before any
 * handleRequest, and concurrent requests for one unknown id share ONE rehydration, so the request
 * that mints the new life is often not the resume. `hold` keeps a rehydration waiting until the
 * test releases it (to make both requests arrive first).
 */
function naiveServerPattern(inst: ServerInstrumentation) {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const rehydrating = new Map<string, Promise<StreamableHTTPServerTransport>>();
  const arrivals: string[] = [];
  let hold: Promise<void> = Promise.resolve();
  const newSession = async (id: string | undefined): Promise<StreamableHTTPServerTransport> => {
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: id === undefined ? randomUUID : () => id,
      eventStore: new CounterStore(),
      onsessioninitialized: (sid) => void sessions.set(sid, transport),
    });
    inst.observeTransport(transport);
    await makeMcpServer().connect(transport);
    if (id !== undefined) {
      const inner = (transport as unknown as { _webStandardTransport: { sessionId?: string; _initialized: boolean } })._webStandardTransport;
      inner.sessionId = id;
      inner._initialized = true;
      sessions.set(id, transport);
    }
    return transport;
  };
  const handler = inst.wrapHandler(async (req: IncomingMessage, res: ServerResponse) => {
    const sid = req.headers['mcp-session-id'] as string | undefined;
    arrivals.push(`${req.method} ${req.headers['last-event-id'] ?? '-'}`);
    let body: unknown;
    if (req.method === 'POST') {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    }
    let t = sid ? sessions.get(sid) : undefined;
    if (!t && !sid) t = await newSession(undefined);
    if (!t && sid) {
      let p = rehydrating.get(sid);
      if (!p) {
        const gate = hold;
        p = gate.then(() => newSession(sid));
        rehydrating.set(sid, p);
      }
      t = await p;
    }
    await t!.handleRequest(req, res, body);
  });
  return {
    handler,
    sessions,
    arrivals,
    holdRehydration(): () => void {
      let release!: () => void;
      hold = new Promise<void>((r) => (release = r));
      return release;
    },
    async reap(sid: string): Promise<void> {
      const t = sessions.get(sid)!;
      sessions.delete(sid);
      rehydrating.delete(sid);
      inst.markEnded(t, 'reaped_idle');
      await t.close();
    },
    async close(): Promise<void> {
      for (const t of sessions.values()) await t.close().catch(() => undefined);
    },
  };
}

/** Initializes a session over raw HTTP; returns its id and the last event id the client received. */
async function rawInitialize(url: URL): Promise<{ sid: string; cursor: string }> {
  const res = await fetch(url, { method: 'POST', headers: postHeaders(), body: JSON.stringify(INIT_BODY) });
  const sid = res.headers.get('mcp-session-id')!;
  const events = parseSse(await res.text()).filter((e) => e.id !== undefined);
  assert.ok(sid && events.length > 0, 'initialize answered on an SSE stream with event ids');
  return { sid, cursor: events.at(-1)!.id! };
}

/** Opens a GET stream and returns its status once the head arrived (the body is abandoned). */
async function openGet(url: URL, sid: string, lastEventId?: string): Promise<{ status: number; abort: () => void }> {
  const ac = new AbortController();
  const headers: Record<string, string> = { accept: 'text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
  if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
  const res = await fetch(url, { headers, signal: ac.signal });
  return { status: res.status, abort: () => ac.abort() };
}

describe('server instrumentation, the seed naive server pattern', { timeout: 20_000 }, () => {
  it('a resume answered by a life a concurrent GET rehydrated is forked (created_by GET, client_supplied_id)', async () => {
    const t = tracing();
    const inst = createServerInstrumentation({ tracerProvider: t.provider, salt: SALT });
    const app = naiveServerPattern(inst);
    const srv = await listen(app.handler);
    const streams: Array<{ abort: () => void }> = [];
    try {
      const { sid, cursor } = await rawInitialize(srv.url);
      await app.reap(sid);
      // The SDK reconnects its standalone GET (no cursor) and the cut POST stream's resume together;
      // the standalone GET arrives first and starts the one shared rehydration.
      const release = app.holdRehydration();
      const standalone = openGet(srv.url, sid);
      await waitFor(() => app.arrivals.includes('GET -'));
      const resume = openGet(srv.url, sid, cursor);
      await waitFor(() => app.arrivals.includes(`GET ${cursor}`));
      release();
      const [a, b] = await Promise.all([standalone, resume]);
      streams.push(a, b);
      assert.deepEqual([a.status, b.status], [200, 200], 'the naive server answered both from a rehydrated life');
      await waitFor(() => t.spans(SPAN_RESUME).length > 0);

      const created = t.spans(SPAN_SESSION_CREATED);
      assert.equal(created.length, 2);
      const reborn = created[1]!;
      assert.equal(attr(reborn, ATTR_SESSION_CREATED_BY), 'GET');
      assert.equal(attr(reborn, ATTR_SESSION_CLIENT_SUPPLIED_ID), true);
      assert.equal(attr(reborn, ATTR_RESUME_LAST_EVENT_ID), undefined, 'minted by the standalone GET, not by the resume');
      const spans = t.spans(SPAN_RESUME);
      assert.equal(spans.length, 1);
      assert.equal(attr(spans[0]!, ATTR_RESUME_LAST_EVENT_ID), cursor);
      assert.equal(attr(spans[0]!, ATTR_HTTP_RESPONSE_STATUS_CODE), 200);
      assert.equal(attr(spans[0]!, ATTR_RESUME_OUTCOME), 'forked');
      assert.equal(attr(spans[0]!, ATTR_RESUME_LAST_EVENT_FOUND), false);
      assert.equal(attr(spans[0]!, ATTR_SESSION_INCARNATION), attr(reborn, ATTR_SESSION_INCARNATION));
    } finally {
      for (const s of streams) s.abort();
      await app.close();
      await srv.close();
    }
  });

  it('a resume arriving after another request rehydrated the id is forked too (cursor unknown to the reborn life)', async () => {
    const t = tracing();
    const inst = createServerInstrumentation({ tracerProvider: t.provider, salt: SALT });
    const app = naiveServerPattern(inst);
    const srv = await listen(app.handler);
    const streams: Array<{ abort: () => void }> = [];
    try {
      const { sid, cursor } = await rawInitialize(srv.url);
      await app.reap(sid);
      streams.push(await openGet(srv.url, sid));
      await waitFor(() => t.spans(SPAN_SESSION_CREATED).length === 2);
      const b = await openGet(srv.url, sid, cursor);
      streams.push(b);
      assert.equal(b.status, 200);
      await waitFor(() => t.spans(SPAN_RESUME).length > 0);
      assert.equal(attr(t.spans(SPAN_SESSION_CREATED)[1]!, ATTR_SESSION_CREATED_BY), 'GET');
      assert.equal(attr(t.spans(SPAN_RESUME)[0]!, ATTR_RESUME_OUTCOME), 'forked');
    } finally {
      for (const s of streams) s.abort();
      await app.close();
      await srv.close();
    }
  });

  it('a resume into a life created by initialize is not a fork, even when its cursor is unknown', async () => {
    const t = tracing();
    const inst = createServerInstrumentation({ tracerProvider: t.provider, salt: SALT });
    const app = naiveServerPattern(inst);
    const srv = await listen(app.handler);
    const streams: Array<{ abort: () => void }> = [];
    try {
      const { sid, cursor } = await rawInitialize(srv.url);
      streams.push(await openGet(srv.url, sid, cursor));
      streams.push(await openGet(srv.url, sid, 'e999'));
      await waitFor(() => t.spans(SPAN_RESUME).length === 2);
      const [known, unknown] = t.spans(SPAN_RESUME);
      assert.equal(attr(known!, ATTR_RESUME_OUTCOME), 'resumed');
      assert.equal(attr(known!, ATTR_RESUME_LAST_EVENT_FOUND), true);
      // A replay gap on a sound life (the detector's replay_gap), not a minted replacement.
      assert.equal(attr(unknown!, ATTR_RESUME_OUTCOME), 'resumed');
      assert.equal(attr(unknown!, ATTR_RESUME_LAST_EVENT_FOUND), false);
      assert.equal(t.spans(SPAN_SESSION_CREATED).length, 1);
    } finally {
      for (const s of streams) s.abort();
      await app.close();
      await srv.close();
    }
  });
});
