import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { diag, type MeterProvider } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { ServerOperations } from '../../../packages/instrumentation/src/conventional/server-operations.js';
import { SessionDurations } from '../../../packages/instrumentation/src/conventional/session-durations.js';
import { errorOutcome } from '../../../packages/instrumentation/src/conventional/client-operations.js';
import { otelSdk } from './harness.js';

// Unit level (in-process fakes of a transport and a Node request): the rules the e2e test of
// mcp-semconv-v1.test.ts cannot steer, i.e. which POST a message came on, and failing meters.
const sdk = otelSdk();

function operations(): { ops: ServerOperations; spans: () => ReturnType<InMemorySpanExporter['getFinishedSpans']> } {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const ops = new ServerOperations({ tracerProvider, meterProvider: sdk.meterProvider, salt: 's', recordRawSessionId: false, logger: diag });
  return { ops, spans: () => exporter.getFinishedSpans() };
}

const post = (port: number, address = '10.0.0.7', httpVersion = '1.1') => ({ method: 'POST', httpVersion, socket: { remoteAddress: address, remotePort: port } });

/** One request through the hooks: received, answered. */
function call(ops: ServerOperations, transport: object, id: number): void {
  ops.received(transport, { jsonrpc: '2.0', id, method: 'tools/list' }, undefined, () => undefined);
  ops.sent(transport, { jsonrpc: '2.0', id, result: { tools: [] } });
}

describe('SERVER span peer attributes (mcpSemconv)', () => {
  it('client.port only while one POST of the transport is in flight; client.address while their peers agree', () => {
    const { ops, spans } = operations();
    const transport = { sessionId: 'sid' };
    const done1 = ops.httpRequest(transport, post(40001))!;
    call(ops, transport, 1);
    const done2 = ops.httpRequest(transport, post(40002))!;
    call(ops, transport, 2);
    done1();
    call(ops, transport, 3);
    done2();
    const other = ops.httpRequest(transport, post(40003, '10.0.0.8'))!;
    const again = ops.httpRequest(transport, post(40004))!;
    call(ops, transport, 4);
    other();
    again();
    call(ops, transport, 5);
    const byId = new Map(spans().map((s) => [s.attributes['jsonrpc.request.id'], s.attributes]));
    assert.deepEqual([byId.get('1')!['client.address'], byId.get('1')!['client.port']], ['10.0.0.7', 40001]);
    assert.deepEqual([byId.get('2')!['client.address'], byId.get('2')!['client.port']], ['10.0.0.7', undefined], 'two POSTs in flight: which one carried it is unknown');
    assert.deepEqual([byId.get('3')!['client.address'], byId.get('3')!['client.port']], ['10.0.0.7', 40002]);
    assert.deepEqual([byId.get('4')!['client.address'], byId.get('4')!['client.port']], [undefined, undefined], 'peers differ: neither');
    assert.deepEqual([byId.get('5')!['client.address'], byId.get('5')!['client.port']], [undefined, undefined], 'no POST in flight: nothing known');
    for (const id of ['1', '2', '3', '4']) assert.equal(byId.get(id)!['network.protocol.version'], '1.1');
  });

  it('HTTP/2 is network.protocol.version 2; a GET (the standalone SSE stream) is no peer of a message', () => {
    const { ops, spans } = operations();
    const transport = { sessionId: 'sid' };
    assert.equal(ops.httpRequest(transport, { method: 'GET', httpVersion: '2.0', socket: { remoteAddress: '10.0.0.9', remotePort: 1 } }), undefined);
    ops.httpRequest(transport, post(40001, '10.0.0.7', '2.0'));
    call(ops, transport, 1);
    assert.equal(spans()[0]!.attributes['network.protocol.version'], '2');
    assert.equal(spans()[0]!.attributes['client.port'], 40001);
  });

  it('a request object without a socket, or a hostile one, costs the attributes, never the host', () => {
    const { ops, spans } = operations();
    const transport = { sessionId: 'sid' };
    const hostile = Object.defineProperty({ method: 'POST' }, 'socket', {
      get() {
        throw new Error('no socket for you');
      },
    });
    assert.equal(ops.httpRequest(transport, hostile), undefined);
    ops.httpRequest(transport, { method: 'POST' })!();
    call(ops, transport, 1);
    assert.equal(spans()[0]!.attributes['client.address'], undefined);
  });
});

describe('session durations (mcpSemconv), unit level', () => {
  it('one point per session from start to end (injected clock); none for a session that never got an id', async () => {
    const own = otelSdk();
    let now = 1000;
    const d = new SessionDurations('server', { meterProvider: own.meterProvider, logger: diag }, () => now);
    const a = {};
    const b = {};
    d.start(a, { 'network.transport': 'tcp' });
    d.start(b, {});
    d.set(a, 'mcp.protocol.version', '2025-06-18');
    now = 3500;
    d.end(a, true);
    d.end(a, true);
    d.end(b, false);
    const points = await own.histogram('mcp.server.session.duration');
    assert.equal(points.length, 1);
    assert.equal(points[0]!.value.count, 1);
    assert.equal(points[0]!.value.sum, 2.5);
    assert.deepEqual(points[0]!.attributes, { 'network.transport': 'tcp', 'mcp.protocol.version': '2025-06-18' });
  });

  it('a meter provider that throws costs the point, never the caller', () => {
    const broken = {
      getMeter() {
        throw new Error('meter down');
      },
    } as unknown as MeterProvider;
    const d = new SessionDurations('client', { meterProvider: broken, logger: diag });
    const key = {};
    d.start(key, {});
    assert.doesNotThrow(() => d.end(key, true));
  });
});

describe('client error outcome', () => {
  it("strips SDK 1.x's own 'MCP error N: ' once; a 2.x ProtocolError's message is the server's as sent", () => {
    const v1 = Object.assign(new Error('MCP error -32602: MCP error -32602: bad'), { name: 'McpError', code: -32602 });
    assert.deepEqual(errorOutcome(v1), { errorType: '-32602', statusCode: '-32602', message: 'MCP error -32602: bad' });
    const v2 = Object.assign(new Error('MCP error -32602: bad'), { name: 'ProtocolError', code: -32602 });
    assert.equal(errorOutcome(v2).message, 'MCP error -32602: bad');
  });
});
