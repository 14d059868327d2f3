import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { createClientInstrumentation } from '../../../packages/instrumentation/src/client/client-instrumentation.js';
import { createServerInstrumentation } from '../../../packages/instrumentation/src/server/server-instrumentation.js';
import { sessionKey } from '../../../packages/instrumentation/src/common/session-key.js';
import {
  MCP_OPERATION_DURATION_BUCKETS,
  METRIC_MCP_CLIENT_OPERATION_DURATION,
  METRIC_MCP_CLIENT_SESSION_DURATION,
  METRIC_MCP_SERVER_OPERATION_DURATION,
  METRIC_MCP_SERVER_SESSION_DURATION,
  SPAN_REQUEST_SENT,
} from '../../../packages/instrumentation/src/semconv.js';
import { listen } from '../server/harness.js';
import { otelSdk, waitFor } from './harness.js';

const SALT = 'conv-salt';
const sdk = otelSdk();

/** A stateful 1.x app (the SDK example's transports map), every transport observed. */
function app(server: ReturnType<typeof createServerInstrumentation>) {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  return async (req: IncomingMessage, res: ServerResponse) => {
    const sid = req.headers['mcp-session-id'] as string | undefined;
    const known = sid ? transports.get(sid) : undefined;
    if (known) return known.handleRequest(req, res);
    const transport = server.observeTransport(
      new StreamableHTTPServerTransport({ sessionIdGenerator: () => crypto.randomUUID(), onsessioninitialized: (id) => void transports.set(id, transport) }),
    );
    const mcp = new McpServer({ name: 'conv', version: '1.0.0' });
    mcp.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }) => {
      // Work the tool does itself: it must hang under the conventional SERVER span.
      trace.getTracer('app').startSpan('app.work').end();
      return { content: [{ type: 'text', text }] };
    });
    mcp.registerTool('broken', {}, async () => ({ isError: true, content: [{ type: 'text', text: 'no' }] }));
    // A prompt, so that prompts/get of another name is -32602 (invalid params), not -32601.
    mcp.registerPrompt('hello', {}, async () => ({ messages: [] }));
    // A handler that throws: the server answers -32603, a failure of the server's own.
    mcp.registerResource('boom', 'boom://x', {}, async () => {
      throw new Error('boom');
    });
    await mcp.connect(transport);
    return transport.handleRequest(req, res);
  };
}

const byName = (name: string, kind: SpanKind) => (s: ReadableSpan) => s.name === name && s.kind === kind;

describe('MCP semantic conventions, SDK 1.x, explicit API (mcpSemconv: true)', () => {
  let http: Awaited<ReturnType<typeof listen>>;
  let client: Client;
  let transport: StreamableHTTPClientTransport;
  let sessionId: string;
  /** What the client's getPrompt of an unknown prompt rejected with (-32602). */
  let promptError: Error;
  /** JSON-RPC messages the client put on the wire, and the traceparent header of each POST. */
  const wire: Array<{ message: any; header: string | null }> = [];
  const capture = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    if (init?.method === 'POST' && typeof init.body === 'string') {
      const header = new Headers(init.headers).get('traceparent');
      for (const message of [JSON.parse(init.body)].flat()) wire.push({ message, header });
    }
    return fetch(input, init);
  };

  before(async () => {
    const server = createServerInstrumentation({ mcpSemconv: true, salt: SALT, meterProvider: sdk.meterProvider, requestSpanDelayMs: 0 });
    http = await listen(app(server));
    const fw = createClientInstrumentation({ mcpSemconv: true, salt: SALT, meterProvider: sdk.meterProvider, requestSpanDelayMs: 0 });
    transport = new StreamableHTTPClientTransport(http.url, { fetch: fw.wrapFetch(capture) });
    client = new Client({ name: 'conv-client', version: '1.0.0' });
    fw.attach(transport, client);
    await client.connect(transport);
    sessionId = transport.sessionId!;
    await client.listTools();
    await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    await client.callTool({ name: 'broken', arguments: {} });
    promptError = await client.getPrompt({ name: 'no-such-prompt' }).then(
      () => assert.fail('getPrompt of an unknown prompt resolved'),
      (e: Error) => e,
    );
    await assert.rejects(client.readResource({ uri: 'boom://x' }));
  });
  after(async () => {
    await client.close();
    await http.close();
  });

  it('a CLIENT and a SERVER span per request, named {mcp.method.name} {target}, with the conventional attributes', async () => {
    const c = await waitFor('client span tools/call echo', () => sdk.spans(byName('tools/call echo', SpanKind.CLIENT))[0]);
    const s = await waitFor('server span tools/call echo', () => sdk.spans(byName('tools/call echo', SpanKind.SERVER))[0]);
    for (const span of [c, s]) {
      assert.equal(span.attributes['mcp.method.name'], 'tools/call');
      assert.equal(span.attributes['gen_ai.tool.name'], 'echo');
      assert.equal(span.attributes['gen_ai.operation.name'], 'execute_tool');
      assert.equal(span.attributes['network.transport'], 'tcp');
      assert.equal(span.attributes['network.protocol.name'], 'http');
      assert.equal(typeof span.attributes['jsonrpc.request.id'], 'string');
      assert.equal(span.attributes['mcp.protocol.version'] !== undefined, true);
      assert.equal(span.attributes['error.type'], undefined);
      assert.equal(span.status.code, SpanStatusCode.UNSET);
    }
    assert.equal(c.attributes['jsonrpc.request.id'], s.attributes['jsonrpc.request.id']);
    assert.equal(c.attributes['server.address'], '127.0.0.1');
    assert.equal(c.attributes['server.port'], Number(http.url.port));
    // tools/list has no target: the span is named by the method alone, and is no execute_tool.
    const list = await waitFor('tools/list spans', () => {
      const l = sdk.spans((x) => x.name === 'tools/list');
      return l.length === 2 ? l : undefined;
    });
    for (const l of list) assert.equal(l.attributes['gen_ai.operation.name'], undefined);
  });

  it('never records the raw session id: forkwatch.session.key instead', () => {
    for (const span of sdk.spans((x) => x.kind === SpanKind.CLIENT || x.kind === SpanKind.SERVER)) {
      assert.equal(span.attributes['mcp.session.id'], undefined, span.name);
      for (const v of Object.values(span.attributes)) assert.notEqual(v, sessionId, `${span.name} carries the raw session id`);
    }
    const s = sdk.spans(byName('tools/call echo', SpanKind.SERVER))[0]!;
    assert.equal(s.attributes['forkwatch.session.key'], sessionKey(sessionId, SALT));
  });

  it('the server span is the child of the client span; the tool spans and forkwatch request.sent hang under them', () => {
    const c = sdk.spans(byName('tools/call echo', SpanKind.CLIENT))[0]!;
    const s = sdk.spans(byName('tools/call echo', SpanKind.SERVER))[0]!;
    assert.equal(s.spanContext().traceId, c.spanContext().traceId);
    assert.equal(s.parentSpanContext?.spanId, c.spanContext().spanId);
    // The tool's own span runs inside the server span.
    const work = sdk.spans((x) => x.name === 'app.work')[0]!;
    assert.equal(work.parentSpanContext?.spanId, s.spanContext().spanId);
    // forkwatch's own request.sent hangs under the client operation span.
    const sent = sdk.spans((x) => x.name === SPAN_REQUEST_SENT && x.attributes['gen_ai.tool.name'] === 'echo')[0]!;
    assert.equal(sent.parentSpanContext?.spanId, c.spanContext().spanId);
  });

  it('every request carries the client span context in params._meta (SEP-414), and still in the traceparent header', () => {
    const c = sdk.spans(byName('tools/call echo', SpanKind.CLIENT))[0]!;
    const sent = wire.find((w) => w.message.method === 'tools/call' && w.message.params?.name === 'echo')!;
    const expected = `00-${c.spanContext().traceId}-${c.spanContext().spanId}-01`;
    assert.equal(sent.message.params._meta.traceparent, expected);
    assert.equal(sent.header, expected);
    for (const w of wire.filter((x) => x.message.id !== undefined)) assert.match(w.message.params?._meta?.traceparent ?? '', /^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/, w.message.method);
  });

  it('the server takes its parent from params._meta over the HTTP header, and links the HTTP context', async () => {
    const metaTrace = 'aa'.repeat(16);
    const headerTrace = 'bb'.repeat(16);
    const res = await fetch(http.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sessionId,
        'mcp-protocol-version': '2025-06-18',
        traceparent: `00-${headerTrace}-${'02'.repeat(8)}-01`,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'raw-1', method: 'tools/call', params: { name: 'echo', arguments: { text: 'raw' }, _meta: { traceparent: `00-${metaTrace}-${'01'.repeat(8)}-01` } } }),
    });
    await res.text();
    const s = await waitFor('server span of raw-1', () => sdk.spans((x) => x.kind === SpanKind.SERVER && x.attributes['jsonrpc.request.id'] === 'raw-1')[0]);
    assert.equal(s.spanContext().traceId, metaTrace);
    assert.equal(s.parentSpanContext?.spanId, '01'.repeat(8));
    assert.deepEqual(s.links.map((l) => l.context.traceId), [headerTrace]);
  });

  it('a tool result with isError is error.type tool_error; a JSON-RPC error is its code in error.type and rpc.response.status_code', () => {
    for (const kind of [SpanKind.CLIENT, SpanKind.SERVER]) {
      const broken = sdk.spans(byName('tools/call broken', kind))[0]!;
      assert.equal(broken.attributes['error.type'], 'tool_error');
      assert.equal(broken.status.code, SpanStatusCode.ERROR);
      // -32603 (the handler threw) is the server's own failure: an error on both sides.
      const boom = sdk.spans((x) => x.kind === kind && x.attributes['mcp.resource.uri'] === 'boom://x')[0]!;
      assert.equal(boom.attributes['error.type'], '-32603');
      assert.equal(boom.attributes['rpc.response.status_code'], '-32603');
      assert.equal(boom.status.code, SpanStatusCode.ERROR, SpanKind[kind]);
    }
    const prompt = sdk.spans(byName('prompts/get no-such-prompt', SpanKind.CLIENT))[0]!;
    assert.equal(prompt.attributes['error.type'], '-32602');
    assert.equal(prompt.attributes['rpc.response.status_code'], '-32602');
    assert.equal(prompt.attributes['gen_ai.prompt.name'], 'no-such-prompt');
    assert.equal(prompt.status.code, SpanStatusCode.ERROR);
  });

  it('-32602 and -32601 are the client\'s fault: no error on the SERVER span (status unset, no error.type), the code still in rpc.response.status_code', async () => {
    const prompt = sdk.spans(byName('prompts/get no-such-prompt', SpanKind.SERVER))[0]!;
    assert.equal(prompt.status.code, SpanStatusCode.UNSET);
    assert.equal(prompt.attributes['error.type'], undefined);
    assert.equal(prompt.attributes['rpc.response.status_code'], '-32602');
    const res = await fetch(http.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': transport.protocolVersion! },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'raw-unknown', method: 'no/such-method', params: {} }),
    });
    assert.match(await res.text(), /-32601/);
    const unknown = await waitFor('server span of no/such-method', () => sdk.spans(byName('no/such-method', SpanKind.SERVER))[0]);
    assert.equal(unknown.status.code, SpanStatusCode.UNSET);
    assert.equal(unknown.attributes['error.type'], undefined);
    assert.equal(unknown.attributes['rpc.response.status_code'], '-32601');
    const point = (await sdk.histogram(METRIC_MCP_SERVER_OPERATION_DURATION)).find((p) => p.attributes['mcp.method.name'] === 'no/such-method');
    assert.equal(point?.attributes['rpc.response.status_code'], '-32601');
    assert.equal(point?.attributes['error.type'], undefined);
  });

  it("the CLIENT span's status description is the JSONRPCError.message, without the 1.x SDK's prefix a second time", () => {
    const prompt = sdk.spans(byName('prompts/get no-such-prompt', SpanKind.CLIENT))[0]!;
    const prefix = 'MCP error -32602: ';
    // The SDK's own error: its prefix on the server's message, which (a 1.x server's McpError) had one already.
    assert.ok(promptError.message.startsWith(prefix + prefix), promptError.message);
    assert.equal(prompt.status.message, promptError.message.slice(prefix.length));
    assert.match(prompt.status.message!, /^MCP error -32602: (?!MCP error)/);
  });

  it('the SERVER spans carry network.protocol.version and the HTTP peer (client.address, client.port); the metric the version only', async () => {
    const s = sdk.spans(byName('tools/call echo', SpanKind.SERVER))[0]!;
    assert.equal(s.attributes['network.protocol.version'], '1.1');
    assert.match(String(s.attributes['client.address']), /^(::ffff:)?127\.0\.0\.1$/);
    assert.equal(typeof s.attributes['client.port'], 'number');
    assert.notEqual(s.attributes['client.port'], Number(http.url.port));
    const point = (await sdk.histogram(METRIC_MCP_SERVER_OPERATION_DURATION)).find((p) => p.attributes['gen_ai.tool.name'] === 'echo')!;
    assert.equal(point.attributes['network.protocol.version'], '1.1');
    assert.equal(point.attributes['client.address'], undefined);
    assert.equal(point.attributes['client.port'], undefined);
  });

  it("the client's initialize span carries mcp.protocol.version: the version the server answered with", () => {
    const init = sdk.spans(byName('initialize', SpanKind.CLIENT))[0]!;
    assert.equal(init.attributes['mcp.protocol.version'], transport.protocolVersion);
    const server = sdk.spans(byName('initialize', SpanKind.SERVER))[0]!;
    assert.equal(server.attributes['mcp.protocol.version'], transport.protocolVersion);
  });

  it('mcp.client.operation.duration and mcp.server.operation.duration: seconds, the conventional buckets, no session attribute', async () => {
    for (const name of [METRIC_MCP_CLIENT_OPERATION_DURATION, METRIC_MCP_SERVER_OPERATION_DURATION]) {
      const points = await sdk.histogram(name);
      const echo = points.find((p) => p.attributes['gen_ai.tool.name'] === 'echo');
      assert.ok(echo, `${name} has a point for tools/call echo`);
      assert.equal(echo.value.count, 1);
      assert.ok(echo.value.sum! > 0 && echo.value.sum! < 60, `${name} is in seconds: ${echo.value.sum}`);
      assert.deepEqual(echo.value.buckets.boundaries, [...MCP_OPERATION_DURATION_BUCKETS]);
      const broken = points.find((p) => p.attributes['gen_ai.tool.name'] === 'broken');
      assert.equal(broken?.attributes['error.type'], 'tool_error');
      assert.ok(points.some((p) => p.attributes['mcp.method.name'] === 'initialize'));
      for (const p of points) {
        for (const k of Object.keys(p.attributes)) assert.ok(!/session|jsonrpc\.request\.id/.test(k), `${name} carries ${k}`);
      }
    }
  });
});

describe('MCP semantic conventions, session durations (SDK 1.x)', () => {
  const own = otelSdk();
  let http: Awaited<ReturnType<typeof listen>>;

  before(async () => {
    const server = createServerInstrumentation({ mcpSemconv: true, salt: SALT, meterProvider: own.meterProvider, tracerProvider: own.tracerProvider });
    http = await listen(app(server));
  });
  after(async () => {
    await http.close();
  });

  it('mcp.client.session.duration and mcp.server.session.duration: one point per session when it ends, seconds, no session attribute', async () => {
    const fw = createClientInstrumentation({ mcpSemconv: true, salt: SALT, meterProvider: own.meterProvider, tracerProvider: own.tracerProvider });
    const transport = new StreamableHTTPClientTransport(http.url);
    const client = new Client({ name: 'session-client', version: '1.0.0' });
    fw.attach(transport, client);
    await client.connect(transport);
    await client.listTools();
    assert.deepEqual(await own.histogram(METRIC_MCP_CLIENT_SESSION_DURATION), [], 'no point while the session lives');
    assert.deepEqual(await own.histogram(METRIC_MCP_SERVER_SESSION_DURATION), []);
    // The client ends the session (DELETE): the server's transport closes.
    await transport.terminateSession();
    await client.close();
    const server = await waitFor('server session point', async () => (await own.histogram(METRIC_MCP_SERVER_SESSION_DURATION))[0]);
    const clientPoint = (await own.histogram(METRIC_MCP_CLIENT_SESSION_DURATION))[0]!;
    for (const p of [server, clientPoint]) {
      assert.equal(p.value.count, 1);
      assert.ok(p.value.sum! > 0 && p.value.sum! < 60, `seconds: ${p.value.sum}`);
      assert.deepEqual(p.value.buckets.boundaries, [...MCP_OPERATION_DURATION_BUCKETS]);
      assert.equal(p.attributes['mcp.protocol.version'], transport.protocolVersion);
      assert.equal(p.attributes['network.transport'], 'tcp');
      assert.equal(p.attributes['network.protocol.name'], 'http');
      for (const k of Object.keys(p.attributes)) assert.ok(!/session|client\.(address|port)/.test(k), `carries ${k}`);
    }
    assert.equal(clientPoint.attributes['server.address'], '127.0.0.1');
    assert.equal(server.attributes['network.protocol.version'], '1.1');
  });
});

describe('MCP semantic conventions off (the default)', () => {
  it('no CLIENT/SERVER spans, no histogram points, no _meta written', async () => {
    const server = createServerInstrumentation({ salt: SALT, meterProvider: sdk.meterProvider, requestSpanDelayMs: 0 });
    const http = await listen(app(server));
    const bodies: string[] = [];
    const fw = createClientInstrumentation({ salt: SALT, meterProvider: sdk.meterProvider, requestSpanDelayMs: 0 });
    const transport = new StreamableHTTPClientTransport(http.url, {
      fetch: fw.wrapFetch((input, init) => {
        if (typeof init?.body === 'string') bodies.push(init.body);
        return fetch(input, init);
      }),
    });
    const client = new Client({ name: 'plain-client', version: '1.0.0' });
    fw.attach(transport, client);
    try {
      const before = (await sdk.histogram(METRIC_MCP_SERVER_OPERATION_DURATION)).reduce((n, p) => n + p.value.count, 0);
      await client.connect(transport);
      await client.callTool({ name: 'echo', arguments: { text: 'plain' } });
      const key = sessionKey(transport.sessionId!, SALT);
      // forkwatch's own spans were emitted for this session: the SDK was listening.
      await waitFor('forkwatch spans of the plain session', () => (sdk.spans((x) => x.attributes['forkwatch.session.key'] === key && x.name.startsWith('forkwatch.')).length > 0 ? true : undefined));
      assert.deepEqual(sdk.spans((x) => x.attributes['forkwatch.session.key'] === key && (x.kind === SpanKind.CLIENT || x.kind === SpanKind.SERVER)).map((x) => x.name), []);
      const afterCount = (await sdk.histogram(METRIC_MCP_SERVER_OPERATION_DURATION)).reduce((n, p) => n + p.value.count, 0);
      assert.equal(afterCount, before);
      assert.ok(bodies.length > 0);
      for (const b of bodies) assert.ok(!b.includes('traceparent'), b);
    } finally {
      await client.close();
      await http.close();
    }
  });
});
