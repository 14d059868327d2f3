import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { McpServer, createMcpHandler, fromJsonSchema } from '@modelcontextprotocol/server';
import { createClientInstrumentation } from '../../../packages/instrumentation/src/client/v2/index.js';
import { observeStatelessServers } from '../../../packages/instrumentation/src/server/v2/index.js';
import { METRIC_MCP_SERVER_OPERATION_DURATION } from '../../../packages/instrumentation/src/semconv.js';
import { otelSdk, waitFor } from './harness.js';

// SDK 2.x stateless (createMcpHandler, 2026-07-28: no session): the server side of the conventions
// through observeStatelessServers({ mcpSemconv: true }), the client through an attached instrumentation.
const sdk = otelSdk();

describe('MCP semantic conventions, SDK 2.x stateless server (observeStatelessServers mcpSemconv)', () => {
  let http: Server;
  let handler: ReturnType<typeof createMcpHandler>;
  let client: Client;

  before(async () => {
    const factory = () => {
      const s = new McpServer({ name: 'stateless-conv', version: '0.1.0' });
      s.registerTool('echo', { inputSchema: fromJsonSchema<{ text: string }>({ type: 'object', properties: { text: { type: 'string' } } }) }, async (args) => ({ content: [{ type: 'text' as const, text: args.text }] }));
      s.registerTool('broken', {}, async () => ({ isError: true, content: [{ type: 'text' as const, text: 'no' }] }));
      return s;
    };
    handler = createMcpHandler(observeStatelessServers(factory, { mcpSemconv: true, meterProvider: sdk.meterProvider }));
    http = createServer(toNodeHandler(handler) as never);
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', () => r()));
    const fw = createClientInstrumentation({ mcpSemconv: true, meterProvider: sdk.meterProvider, requestSpanDelayMs: 0 });
    const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${(http.address() as { port: number }).port}/mcp`), { fetch: fw.wrapFetch() as never });
    client = new Client({ name: 'stateless-conv-client', version: '0.1.0' }, { versionNegotiation: { mode: 'auto' } });
    fw.attach(transport as never, client as never);
    await client.connect(transport, { timeout: 10_000 });
    await client.callTool({ name: 'echo', arguments: { text: 'hi' } }, { timeout: 10_000 });
    await client.callTool({ name: 'broken', arguments: {} }, { timeout: 10_000 });
  });
  after(async () => {
    await client.close().catch(() => {});
    await handler.close();
    await new Promise<void>((r) => http.close(() => r()));
  });

  it('a SERVER span per request, the child of the client span through params._meta, no session attribute', async () => {
    const c = await waitFor('client span', () => sdk.spans((s) => s.name === 'tools/call echo' && s.kind === SpanKind.CLIENT)[0]);
    const s = await waitFor('server span', () => sdk.spans((x) => x.name === 'tools/call echo' && x.kind === SpanKind.SERVER)[0]);
    assert.equal(s.parentSpanContext?.spanId, c.spanContext().spanId);
    assert.equal(s.attributes['gen_ai.operation.name'], 'execute_tool');
    assert.equal(s.attributes['forkwatch.session.key'], undefined);
    assert.equal(s.attributes['mcp.session.id'], undefined);
    const broken = await waitFor('broken server span', () => sdk.spans((x) => x.name === 'tools/call broken' && x.kind === SpanKind.SERVER)[0]);
    assert.equal(broken.attributes['error.type'], 'tool_error');
    assert.equal(broken.status.code, SpanStatusCode.ERROR);
  });

  it('mcp.server.operation.duration has the calls', async () => {
    const points = await sdk.histogram(METRIC_MCP_SERVER_OPERATION_DURATION);
    assert.ok(points.some((p) => p.attributes['gen_ai.tool.name'] === 'echo' && p.value.count === 1), JSON.stringify(points.map((p) => p.attributes)));
  });
});
