import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { context, trace } from '@opentelemetry/api';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { createClientInstrumentation } from '../../../packages/instrumentation/src/client/client-instrumentation.js';
import { createServerInstrumentation } from '../../../packages/instrumentation/src/server/server-instrumentation.js';
import { SPAN_REQUEST_RECEIVED } from '../../../packages/instrumentation/src/semconv.js';
import { listen, makeMcpServer } from '../server/harness.js';
import { otelSdk, waitFor } from './harness.js';

// Trace context in params._meta with the MCP conventions' option OFF (the default): the client
// writes the context active at client.request() into _meta as well as the HTTP header, and the
// server's forkwatch.request.received takes _meta's context over the header's.
const sdk = otelSdk();

describe('trace context in params._meta (SEP-414), default options', () => {
  let http: Awaited<ReturnType<typeof listen>>;
  const wire: Array<{ message: any; header: string | null }> = [];
  const capture = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    if (init?.method === 'POST' && typeof init.body === 'string') {
      const header = new Headers(init.headers).get('traceparent');
      for (const message of [JSON.parse(init.body)].flat()) wire.push({ message, header });
    }
    return fetch(input, init);
  };

  before(async () => {
    const server = createServerInstrumentation({ requestSpanDelayMs: 0 });
    const transports = new Map<string, StreamableHTTPServerTransport>();
    http = await listen(async (req: IncomingMessage, res: ServerResponse) => {
      const sid = req.headers['mcp-session-id'] as string | undefined;
      const known = sid ? transports.get(sid) : undefined;
      if (known) return known.handleRequest(req, res);
      const transport = server.observeTransport(new StreamableHTTPServerTransport({ sessionIdGenerator: () => crypto.randomUUID(), onsessioninitialized: (id) => void transports.set(id, transport) }));
      await makeMcpServer().connect(transport);
      return transport.handleRequest(req, res);
    });
  });
  after(() => http.close());

  for (const sdkLine of ['1.x', '2.x'] as const) {
    it(`SDK ${sdkLine} client: the app's active span goes into params._meta and the header; the request is otherwise unchanged`, async () => {
      const fw = createClientInstrumentation({ requestSpanDelayMs: 0 });
      const v1 = sdkLine === '1.x';
      const transport = v1 ? new StreamableHTTPClientTransport(http.url, { fetch: fw.wrapFetch(capture) }) : new TransportV2(http.url, { fetch: fw.wrapFetch(capture) as never });
      const client = v1 ? new Client({ name: 'meta', version: '1' }) : new ClientV2({ name: 'meta', version: '1' });
      fw.attach(transport as never, client as never);
      await client.connect(transport as never);
      const from = wire.length;
      const span = trace.getTracer('app').startSpan(`app.op ${sdkLine}`);
      await context.with(trace.setSpan(context.active(), span), () => client.callTool({ name: 'echo', arguments: { text: 'meta' } }));
      span.end();
      const call = wire.slice(from).find((w) => w.message.method === 'tools/call')!;
      const expected = `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`;
      assert.equal(call.message.params._meta.traceparent, expected);
      assert.equal(call.header, expected);
      assert.deepEqual(call.message.params.arguments, { text: 'meta' });
      assert.equal(call.message.params.name, 'echo');
      await client.close();
    });
  }

  it('an app-written _meta.traceparent is kept as it is', async () => {
    const fw = createClientInstrumentation({ requestSpanDelayMs: 0 });
    const transport = new StreamableHTTPClientTransport(http.url, { fetch: fw.wrapFetch(capture) });
    const client = new Client({ name: 'meta-own', version: '1' });
    fw.attach(transport, client);
    await client.connect(transport);
    const own = `00-${'cd'.repeat(16)}-${'ef'.repeat(8)}-01`;
    const span = trace.getTracer('app').startSpan('app.op own');
    await context.with(trace.setSpan(context.active(), span), () => client.callTool({ name: 'echo', arguments: { text: 'own' }, _meta: { traceparent: own } }));
    span.end();
    const call = wire.find((w) => w.message.method === 'tools/call' && w.message.params.arguments.text === 'own')!;
    assert.equal(call.message.params._meta.traceparent, own);
    await client.close();
  });

  it("the server's forkwatch.request.received is parented on params._meta over the HTTP header", async () => {
    const init = await fetch(http.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
    });
    const sessionId = init.headers.get('mcp-session-id')!;
    await init.text();
    const metaTrace = 'a1'.repeat(16);
    const res = await fetch(http.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sessionId,
        'mcp-protocol-version': '2025-06-18',
        traceparent: `00-${'b2'.repeat(16)}-${'02'.repeat(8)}-01`,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'meta-1', method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' }, _meta: { traceparent: `00-${metaTrace}-${'01'.repeat(8)}-01` } } }),
    });
    await res.text();
    const received = await waitFor('request.received meta-1', () => sdk.spans((s) => s.name === SPAN_REQUEST_RECEIVED && s.attributes['jsonrpc.request.id'] === 'meta-1')[0]);
    assert.equal(received.spanContext().traceId, metaTrace);
    assert.equal(received.parentSpanContext?.spanId, '01'.repeat(8));
  });
});
