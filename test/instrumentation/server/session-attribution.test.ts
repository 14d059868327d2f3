/** Which request a new incarnation is credited to (`created_by`, client-supplied ids), through wrapHandler and rehydrating apps. */
import { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { propagation } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createServerInstrumentation } from '../../../packages/instrumentation/src/server/server-instrumentation.js';
import { sessionKey } from '../../../packages/instrumentation/src/common/session-key.js';
import {
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_RESUME_LAST_EVENT_FOUND,
  ATTR_RESUME_LAST_EVENT_ID,
  ATTR_RESUME_OUTCOME,
  ATTR_SESSION_CLIENT_SUPPLIED_ID,
  ATTR_SESSION_CREATED_BY,
  ATTR_SESSION_END_REASON,
  ATTR_SESSION_INCARNATION,
  ATTR_SESSION_KEY,
  SPAN_RESUME,
  SPAN_SESSION_CREATED,
  SPAN_SESSION_ENDED,
} from '../../../packages/instrumentation/src/semconv.js';
import {
  attr,
  INIT_BODY,
  listen,
  postHeaders,
  tracing,
} from './harness.js';
import { SALT, naiveApp, waitFor } from './naive-app.js';

describe('server instrumentation, session attribution', { timeout: 20_000 }, () => {
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
});
