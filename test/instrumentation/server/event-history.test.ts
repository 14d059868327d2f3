import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import { propagation } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { createServerInstrumentation } from '../../../packages/instrumentation/src/server/server-instrumentation.js';
import { ATTR_RESUME_OUTCOME, ATTR_SSE_EVENT_ID, ATTR_SSE_REPLAYED, SPAN_RESUME, SPAN_SSE_EVENT } from '../../../packages/instrumentation/src/semconv.js';
import { attr, listen, makeMcpServer, parseSse, tracing } from './harness.js';

/** A real SDK app with an event store (resumable), instrumented with the default options. */
async function resumableApp(inst: ReturnType<typeof createServerInstrumentation>) {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const store = new InMemoryEventStore();
  const srv = await listen(
    inst.wrapHandler(async (req: IncomingMessage, res: ServerResponse) => {
      const sid = req.headers['mcp-session-id'] as string | undefined;
      const existing = sid ? transports.get(sid) : undefined;
      if (existing) return existing.handleRequest(req, res);
      const t: StreamableHTTPServerTransport = inst.observeTransport(
        new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID, eventStore: store, onsessioninitialized: (id) => void transports.set(id, t) }),
      );
      await makeMcpServer().connect(t);
      return t.handleRequest(req, res);
    }),
  );
  return srv;
}

const spanMs = (s: { startTime: [number, number] }): number => s.startTime[0] * 1000 + s.startTime[1] / 1e6;

describe('server event history', { timeout: 20_000 }, () => {
  it('emits no event span without a moment, and drops the history when the client closes the session', async () => {
    const t = tracing();
    const inst = createServerInstrumentation({ tracerProvider: t.provider });
    const srv = await resumableApp(inst);
    const transport = new StreamableHTTPClientTransport(srv.url);
    const client = new Client({ name: 'c', version: '1' });
    try {
      await client.connect(transport);
      for (let i = 0; i < 3; i++) await client.callTool({ name: 'echo', arguments: { text: `hi ${i}` } });
      assert.equal(t.spans(SPAN_SSE_EVENT).length, 0);
      assert.ok(inst.bufferedEvents >= 6, `buffered ${inst.bufferedEvents}`);
      await transport.terminateSession();
      await client.close();
      assert.equal(inst.bufferedEvents, 0, 'a clean end drops the history');
      assert.equal(t.spans(SPAN_SSE_EVENT).length, 0);
    } finally {
      await srv.close();
    }
  });

  it('buffers nothing for a tracer that records nothing (no SDK registered)', async () => {
    const inst = createServerInstrumentation();
    const srv = await resumableApp(inst);
    const client = new Client({ name: 'c', version: '1' });
    try {
      await client.connect(new StreamableHTTPClientTransport(srv.url));
      await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
      assert.equal(inst.bufferedEvents, 0);
    } finally {
      await client.close();
      await srv.close();
    }
  });

  it('reports the events sent before a resume after it, with the times they were sent', async () => {
    const t = tracing();
    const inst = createServerInstrumentation({ tracerProvider: t.provider });
    const srv = await resumableApp(inst);
    const bodies: string[] = [];
    const transport = new StreamableHTTPClientTransport(srv.url, {
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        if (init?.method === 'POST' && res.headers.get('content-type')?.includes('text/event-stream')) {
          void res.clone().text().then((b) => bodies.push(b), () => undefined);
        }
        return res;
      },
    });
    const client = new Client({ name: 'c', version: '1' });
    try {
      await client.connect(transport);
      const sentFrom = Date.now();
      await client.callTool({ name: 'echo', arguments: { text: 'before' } });
      const sentUntil = Date.now();
      const deadline = Date.now() + 5000;
      while (bodies.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      const wire = bodies.flatMap(parseSse).filter((e) => e.id !== undefined);
      assert.ok(wire.length >= 2);
      assert.equal(t.spans(SPAN_SSE_EVENT).length, 0, 'nothing emitted before the moment');
      await new Promise((r) => setTimeout(r, 400));
      // The client reconnects with the last event it saw: a resume, the moment.
      const resumedAt = Date.now();
      const res = await fetch(srv.url, {
        method: 'GET',
        headers: { accept: 'text/event-stream', 'mcp-session-id': transport.sessionId!, 'mcp-protocol-version': transport.protocolVersion ?? '2025-06-18', 'last-event-id': wire[wire.length - 1]!.id! },
      });
      await res.body?.cancel();
      const resume = t.spans(SPAN_RESUME);
      assert.equal(resume.length, 1);
      assert.equal(attr(resume[0]!, ATTR_RESUME_OUTCOME), 'resumed');
      const events = t.spans(SPAN_SSE_EVENT);
      for (const w of wire) {
        const s = events.find((e) => attr(e, ATTR_SSE_EVENT_ID) === w.id);
        assert.ok(s, `event ${w.id} sent before the resume is reported after it`);
      }
      // The first send of each, not a copy the resume replayed: the SDK's InMemoryEventStore orders
      // ids of one millisecond by their random suffix, so it may replay an event of the same
      // stream (correctly stamped at the resume, with forkwatch.sse.replayed).
      const call = events.filter((e) => attr(e, ATTR_SSE_REPLAYED) !== true && wire.slice(-2).some((w) => w.id === attr(e, ATTR_SSE_EVENT_ID)));
      assert.ok(call.length >= 2, 'the call\'s events were reported as first sent');
      for (const s of call) {
        const at = spanMs(s);
        assert.ok(at >= sentFrom - 100 && at <= sentUntil + 100, `stamped when sent (${at - sentFrom} ms after the call began), not at the resume (${resumedAt - sentFrom})`);
      }
    } finally {
      await client.close();
      await srv.close();
    }
  });

  describe('trace context', () => {
    before(() => propagation.setGlobalPropagator(new W3CTraceContextPropagator()));
    after(() => propagation.disable());

    it('parents events reported at a later moment on the traceparent of the request that sent them', async () => {
      const t = tracing();
      const inst = createServerInstrumentation({ tracerProvider: t.provider });
      const srv = await resumableApp(inst);
      const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
      const parentSpanId = '00f067aa0ba902b7';
      const bodies: string[] = [];
      const transport = new StreamableHTTPClientTransport(srv.url, {
        fetch: async (input, init) => {
          const call = typeof init?.body === 'string' && init.body.includes('"tools/call"');
          const headers = new Headers(init?.headers);
          if (call) headers.set('traceparent', `00-${traceId}-${parentSpanId}-01`);
          const res = await fetch(input, { ...init, headers });
          if (call) void res.clone().text().then((b) => bodies.push(b), () => undefined);
          return res;
        },
      });
      const client = new Client({ name: 'c', version: '1' });
      try {
        await client.connect(transport);
        await client.callTool({ name: 'echo', arguments: { text: 'traced' } });
        const deadline = Date.now() + 5000;
        while (bodies.length < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
        const wire = bodies.flatMap(parseSse).filter((e) => e.id !== undefined);
        assert.ok(wire.length >= 1, 'the call was answered on an SSE stream with event ids');
        // Long after that request ended, a resume: its events are emitted now, from the ring.
        const res = await fetch(srv.url, {
          method: 'GET',
          headers: { accept: 'text/event-stream', 'mcp-session-id': transport.sessionId!, 'mcp-protocol-version': transport.protocolVersion ?? '2025-06-18', 'last-event-id': wire[wire.length - 1]!.id! },
        });
        await res.body?.cancel();
        const events = t.spans(SPAN_SSE_EVENT).filter((e) => wire.some((w) => w.id === attr(e, ATTR_SSE_EVENT_ID)) && attr(e, ATTR_SSE_REPLAYED) !== true);
        assert.ok(events.length >= 1, 'the call\'s events are reported at the resume');
        for (const e of events) {
          assert.equal(e.spanContext().traceId, traceId);
          assert.equal(e.parentSpanContext?.spanId, parentSpanId);
        }
      } finally {
        await client.close();
        await srv.close();
      }
    });
  });
});
