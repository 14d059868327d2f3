import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { BasicTracerProvider, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { createClientInstrumentation } from '../../../packages/instrumentation/src/client/client-instrumentation.js';
import { createClientGuard } from '../../../packages/instrumentation/src/client/client-guard.js';
import type { FetchLike } from '../../../packages/instrumentation/src/client/types.js';
import type { Tracer, TracerProvider } from '@opentelemetry/api';
import * as sc from '../../../packages/instrumentation/src/semconv.js';
import { spanCollector } from './helpers/spans.js';
import { startSdkServer } from './helpers/sdk-server.js';

const TEN_MB = 'x'.repeat(10 * 1024 * 1024);
const SSE = 'id: e1\nevent: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n\n';

function throwingExporter(): SpanExporter {
  return {
    export() {
      throw new Error('collector down');
    },
    async shutdown() {},
  };
}

function throwingTracerProvider(): TracerProvider {
  const tracer = {
    startSpan(): never {
      throw new Error('tracer broken');
    },
  } as unknown as Tracer;
  return { getTracer: () => tracer };
}

/** In-process fake of the network for header sizes no HTTP stack would carry. */
const fakeFetch =
  (headers: Record<string, string>, body: string): FetchLike =>
  async () =>
    new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream', ...headers } });

describe('hostile input never throws into the app', { timeout: 30_000 }, () => {
  it('a 10 MB Mcp-Session-Id response header and a 10 MB Last-Event-ID request header', async () => {
    const col = spanCollector();
    const instr = createClientInstrumentation({ tracerProvider: col.provider });
    const guard = createClientGuard({ tracerProvider: col.provider });
    const plain = instr.wrapFetch(fakeFetch({ 'mcp-session-id': TEN_MB }, SSE));
    const res = await plain('http://127.0.0.1:1/mcp', { method: 'GET', headers: { 'last-event-id': TEN_MB, 'mcp-session-id': 'abc' } });
    assert.equal(await res.text(), SSE);
    // Through the guard the 10 MB id must be the session's own (another id is a fork, rightly raised).
    const guarded = guard.wrapFetch(instr.wrapFetch(fakeFetch({ 'mcp-session-id': TEN_MB }, SSE)));
    const res2 = await guarded('http://127.0.0.1:1/mcp', { method: 'GET', headers: { 'last-event-id': TEN_MB, 'mcp-session-id': TEN_MB } });
    assert.equal(await res2.text(), SSE);
    const spans = col.spans();
    assert.ok(spans.length > 0);
    for (const s of spans) for (const v of Object.values(s.attributes)) if (typeof v === 'string') assert.ok(v.length <= 256, 'attributes are cut to 256');
    const ev = spans.find((s) => s.name === sc.SPAN_SSE_EVENT)!;
    assert.match(ev.attributes[sc.ATTR_SESSION_KEY] as string, /^[0-9a-f]{32}$/);
  });

  it('garbage SSE over real HTTP passes through byte for byte', async () => {
    const garbage = Buffer.concat([
      Buffer.from('id: e1\ndata: {not json\n\n'),
      Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0x0a, 0x0d]),
      randomBytes(4096),
      Buffer.from('\r\n\r\nid: e2\r\ndata: ' + 'y'.repeat(2 * 1024 * 1024) + '\r\n\r\n'),
      Buffer.from('id\0: \0\n:comment\nretry: x\nid: e3\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n'),
      Buffer.from('id: e4\ndata: unterminated'),
    ]);
    const http = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 's' });
      // Many small writes so chunk boundaries fall inside lines, CRLFs and UTF-8 sequences.
      let i = 0;
      const step = (): void => {
        if (i >= garbage.length) return void res.end();
        res.write(garbage.subarray(i, i + 977));
        i += 977;
        setImmediate(step);
      };
      step();
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(http.address() as { port: number }).port}/mcp`;
    try {
      const col = spanCollector();
      // requestSpanDelayMs 0: every event is emitted as it arrives (no moment needed to see them).
      const instr = createClientInstrumentation({ tracerProvider: col.provider, maxEventChars: 64 * 1024, requestSpanDelayMs: 0 });
      const res = await instr.wrapFetch()(url, { method: 'GET', headers: { accept: 'text/event-stream' } });
      const got = Buffer.from(await res.arrayBuffer());
      assert.ok(got.equals(garbage), 'bytes unchanged');
      const ids = col.spans(sc.SPAN_SSE_EVENT).map((s) => s.attributes[sc.ATTR_SSE_EVENT_ID]);
      assert.ok(ids.includes('e1') && ids.includes('e3'), `parsed around the garbage: ${ids.join(',')}`);
      assert.ok(!ids.includes('e2'), 'the oversized event was skipped, not buffered');
      assert.ok(instr.stats.oversizedEvents >= 1);
      // The guard re-frames events but must not throw either.
      const guard = createClientGuard({ maxEventChars: 64 * 1024 });
      const res2 = await guard.wrapFetch()(url, { method: 'GET', headers: { accept: 'text/event-stream', 'mcp-session-id': 's' } });
      assert.ok((await res2.arrayBuffer()).byteLength > 2 * 1024 * 1024);
    } finally {
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    }
  });

  for (const [label, provider] of [
    ['an exporter that throws', new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(throwingExporter())] })],
    ['a tracer that throws', throwingTracerProvider()],
  ] as const) {
  it(`${label} does not break a real MCP call`, async () => {
    const server = await startSdkServer();
    const instr = createClientInstrumentation({ tracerProvider: provider });
    const guard = createClientGuard({ tracerProvider: provider });
    const transport = new StreamableHTTPClientTransport(server.url, { fetch: guard.wrapFetch(instr.wrapFetch()) });
    const client = new Client({ name: 't', version: '1' });
    guard.attach(transport, client);
    instr.attach(transport, client);
    try {
      await client.connect(transport);
      const res = await client.callTool({ name: 'echo', arguments: {} }, undefined, { onprogress: () => undefined });
      assert.deepEqual(res.content, [{ type: 'text', text: 'echoed' }]);
      if (label === 'a tracer that throws') assert.ok(instr.stats.spanFailures > 0, 'the failures were counted, not thrown');
    } finally {
      await client.close();
      await server.close();
    }
  });
  }

  it('passes the inner fetch error through unchanged and ignores non-JSON bodies', async () => {
    const boom = new TypeError('fetch failed');
    const instr = createClientInstrumentation({ tracerProvider: spanCollector().provider });
    const f = createClientGuard().wrapFetch(instr.wrapFetch(async () => Promise.reject(boom)));
    await assert.rejects(f('http://127.0.0.1:1/mcp', { method: 'POST', body: '{{{ not json', headers: { 'content-type': 'application/json' } }), (e) => e === boom);
  });
});
