import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { McpServer, fromJsonSchema } from '@modelcontextprotocol/server';
import { createClientInstrumentation } from '../../../packages/instrumentation/src/client/v2/index.js';
import { observeTransport } from '../../../packages/instrumentation/src/server/v2/index.js';
import { createServerInstrumentation } from '../../../packages/instrumentation/src/server/server-instrumentation.js';
import { sessionKey } from '../../../packages/instrumentation/src/common/session-key.js';
import {
  METRIC_MCP_CLIENT_OPERATION_DURATION,
  METRIC_MCP_CLIENT_SESSION_DURATION,
  METRIC_MCP_SERVER_OPERATION_DURATION,
  METRIC_MCP_SERVER_SESSION_DURATION,
} from '../../../packages/instrumentation/src/semconv.js';
import { listen } from '../server/harness.js';
import { otelSdk, waitFor } from './harness.js';

const SALT = 'conv-v2-salt';
const sdk = otelSdk();

/** A stateful SDK 2.x app (NodeStreamableHTTPServerTransport per session), every transport observed. */
function app(server: ReturnType<typeof createServerInstrumentation>) {
  const transports = new Map<string, NodeStreamableHTTPServerTransport>();
  return async (req: IncomingMessage, res: ServerResponse) => {
    const sid = req.headers['mcp-session-id'] as string | undefined;
    const known = sid ? transports.get(sid) : undefined;
    if (known) return known.handleRequest(req, res);
    const transport = observeTransport(
      server,
      new NodeStreamableHTTPServerTransport({ sessionIdGenerator: () => crypto.randomUUID(), onsessioninitialized: (id: string) => void transports.set(id, transport) }),
    );
    const mcp = new McpServer({ name: 'conv-v2', version: '1.0.0' });
    mcp.registerTool('echo', { inputSchema: fromJsonSchema<{ text: string }>({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }) }, async (args) => {
      trace.getTracer('app').startSpan('app.work.v2').end();
      return { content: [{ type: 'text' as const, text: args.text }] };
    });
    mcp.registerTool('broken', {}, async () => ({ isError: true, content: [{ type: 'text' as const, text: 'no' }] }));
    // A prompt, so that prompts/get of another name is -32602 (invalid params).
    mcp.registerPrompt('hello', {}, async () => ({ messages: [] }));
    await mcp.connect(transport);
    return transport.handleRequest(req, res);
  };
}

const byName = (name: string, kind: SpanKind) => (s: ReadableSpan) => s.name === name && s.kind === kind;

describe('MCP semantic conventions, SDK 2.x client and server (mcpSemconv: true)', () => {
  let http: Awaited<ReturnType<typeof listen>>;
  let client: Client;
  let transport: StreamableHTTPClientTransport;
  let promptError: Error;

  before(async () => {
    const server = createServerInstrumentation({ mcpSemconv: true, salt: SALT, meterProvider: sdk.meterProvider, requestSpanDelayMs: 0 });
    http = await listen(app(server));
    const fw = createClientInstrumentation({ mcpSemconv: true, salt: SALT, meterProvider: sdk.meterProvider, requestSpanDelayMs: 0 });
    transport = new StreamableHTTPClientTransport(http.url, { fetch: fw.wrapFetch() as never });
    client = new Client({ name: 'conv-v2-client', version: '1.0.0' });
    fw.attach(transport as never, client as never);
    await client.connect(transport);
    await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    await client.callTool({ name: 'broken', arguments: {} });
    promptError = await client.getPrompt({ name: 'no-such-prompt' }).then(
      () => assert.fail('getPrompt of an unknown prompt resolved'),
      (e: Error) => e,
    );
  });
  after(async () => {
    await client.close();
    await http.close();
  });

  it('CLIENT and SERVER spans per request, the server one the child of the client one through params._meta', async () => {
    const c = await waitFor('client span', () => sdk.spans(byName('tools/call echo', SpanKind.CLIENT))[0]);
    const s = await waitFor('server span', () => sdk.spans(byName('tools/call echo', SpanKind.SERVER))[0]);
    assert.equal(s.parentSpanContext?.spanId, c.spanContext().spanId);
    assert.equal(c.attributes['gen_ai.operation.name'], 'execute_tool');
    assert.equal(s.attributes['mcp.method.name'], 'tools/call');
    assert.equal(s.attributes['forkwatch.session.key'], sessionKey(transport.sessionId!, SALT));
    assert.equal(s.attributes['mcp.session.id'], undefined);
    const work = sdk.spans((x) => x.name === 'app.work.v2')[0]!;
    assert.equal(work.parentSpanContext?.spanId, s.spanContext().spanId);
    assert.ok(sdk.spans(byName('initialize', SpanKind.CLIENT)).length === 1);
    assert.ok(sdk.spans(byName('initialize', SpanKind.SERVER)).length === 1);
    for (const kind of [SpanKind.CLIENT, SpanKind.SERVER]) {
      const broken = await waitFor('broken span', () => sdk.spans(byName('tools/call broken', kind))[0]);
      assert.equal(broken.attributes['error.type'], 'tool_error');
      assert.equal(broken.status.code, SpanStatusCode.ERROR);
    }
  });

  it('both duration histograms have a point per method', async () => {
    for (const name of [METRIC_MCP_CLIENT_OPERATION_DURATION, METRIC_MCP_SERVER_OPERATION_DURATION]) {
      const points = await sdk.histogram(name);
      assert.ok(points.some((p) => p.attributes['gen_ai.tool.name'] === 'echo' && p.value.count === 1), name);
      assert.ok(points.some((p) => p.attributes['mcp.method.name'] === 'initialize'), name);
    }
  });

  it('-32602 on the server: status unset, no error.type; on the client an error whose description is the message as sent', async () => {
    const server = await waitFor('server prompts/get', () => sdk.spans(byName('prompts/get no-such-prompt', SpanKind.SERVER))[0]);
    assert.equal(server.status.code, SpanStatusCode.UNSET);
    assert.equal(server.attributes['error.type'], undefined);
    assert.equal(server.attributes['rpc.response.status_code'], '-32602');
    const c = await waitFor('client prompts/get', () => sdk.spans(byName('prompts/get no-such-prompt', SpanKind.CLIENT))[0]);
    assert.equal(c.status.code, SpanStatusCode.ERROR);
    assert.equal(c.attributes['error.type'], '-32602');
    // 2.x's ProtocolError keeps the server's message as it is: nothing to take off.
    assert.equal(c.status.message, promptError.message);
  });

  it('SERVER spans carry network.protocol.version and client.address; the initialize spans the negotiated mcp.protocol.version', () => {
    const s = sdk.spans(byName('tools/call echo', SpanKind.SERVER))[0]!;
    assert.equal(s.attributes['network.protocol.version'], '1.1');
    assert.match(String(s.attributes['client.address']), /^(::ffff:)?127\.0\.0\.1$/);
    for (const kind of [SpanKind.CLIENT, SpanKind.SERVER]) {
      assert.equal(sdk.spans(byName('initialize', kind))[0]!.attributes['mcp.protocol.version'], transport.protocolVersion, SpanKind[kind]);
    }
  });

  it('session durations: a point on each side once the client terminates the session', async () => {
    await transport.terminateSession();
    const server = await waitFor('server session point', async () => (await sdk.histogram(METRIC_MCP_SERVER_SESSION_DURATION))[0]);
    const c = (await sdk.histogram(METRIC_MCP_CLIENT_SESSION_DURATION))[0];
    assert.ok(c, 'client session point');
    for (const p of [server, c]) {
      assert.equal(p.value.count, 1);
      assert.equal(p.attributes['mcp.protocol.version'], transport.protocolVersion);
    }
  });
});
