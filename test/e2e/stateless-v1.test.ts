/**
 * SDK 1.x run stateless (`sessionIdGenerator: undefined`, a transport and server per request, as
 * the SDK's stateless example does) end to end: forkwatch's 1.x server instrumentation on the
 * transports, a 1.x client with the 1.x client instrumentation, the demo's fault proxy cutting the
 * response stream mid tool call, and the detector's engine over the spans (serialized as OTLP
 * JSON). The 1.x client does not fail a call whose stream ended without an event id: it waits to
 * its timeout.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { propagation } from '@opentelemetry/api';
import { z } from 'zod';
import { createClientInstrumentation } from '@forkwatch/instrumentation/client';
import { createServerInstrumentation } from '@forkwatch/instrumentation/server';
import { FaultProxy } from '../../src/demo/fault-proxy.js';
import { decodeJson } from '../../src/otlp/decode-json.js';
import { FORK_KINDS } from '../../src/model/finding.js';
import { harness } from '../correlate/harness.js';

const STEPS = 8;
const STEP_MS = 60;
const CALL_TIMEOUT_MS = 2_000;
const DEADLINE_MS = 10_000;

function provider(exporter: InMemorySpanExporter, service: string): BasicTracerProvider {
  return new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': service }), spanProcessors: [new SimpleSpanProcessor(exporter)] });
}

async function waitFor(cond: () => boolean, what: string): Promise<void> {
  const until = Date.now() + DEADLINE_MS;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

interface Run {
  kinds: string[];
  firstOutcome: string;
  runs: { started: number; finished: number };
  /** Trace ids of the cut call's client and server request spans. */
  traces: { client: Set<string>; server: Set<string> };
}

/** One report call cut after its first progress notification; `reissue`: the app calls again once it timed out. */
async function run(o: { reissue: boolean; cut?: boolean; cancel?: boolean }): Promise<Run> {
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const serverSpans = new InMemorySpanExporter();
  const clientSpans = new InMemorySpanExporter();
  const runs = { started: 0, finished: 0 };
  const fw = createServerInstrumentation({ tracerProvider: provider(serverSpans, 'v1-stateless-server') });
  const http: Server = createServer((req, res) => {
    void (async () => {
      const mcp = new McpServer({ name: 'v1-stateless', version: '0.1.0' });
      mcp.registerTool('report', { inputSchema: { topic: z.string() } }, async ({ topic }, extra) => {
        runs.started++;
        const token = extra._meta?.progressToken;
        for (let i = 1; i <= STEPS; i++) {
          await new Promise((r) => setTimeout(r, STEP_MS));
          if (token !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: STEPS } }).catch(() => {});
        }
        runs.finished++;
        return { content: [{ type: 'text' as const, text: `report on ${topic}` }] };
      });
      const transport = fw.observeTransport(new StreamableHTTPServerTransport({ sessionIdGenerator: undefined }));
      res.on('close', () => {
        void transport.close();
        void mcp.close();
      });
      await mcp.connect(transport);
      await transport.handleRequest(req, res);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', () => r()));
  const port = (http.address() as { port: number }).port;
  const proxy = await FaultProxy.start({ targetPort: port, mode: 'refuse' });
  const cfw = createClientInstrumentation({ tracerProvider: provider(clientSpans, 'v1-stateless-client') });
  const transport = new StreamableHTTPClientTransport(new URL(proxy.url('/mcp')), { fetch: cfw.wrapFetch() });
  const client = new Client({ name: 'v1-stateless-app', version: '0.1.0' });
  cfw.attach(transport, client);
  let firstOutcome = '';
  try {
    await client.connect(transport);
    assert.equal(transport.sessionId, undefined, 'the server is stateless');
    let progress = 0;
    const abort = new AbortController();
    const first = client
      .callTool({ name: 'report', arguments: { topic: 'q3' } }, undefined, { timeout: CALL_TIMEOUT_MS, signal: abort.signal, onprogress: () => void progress++ })
      .then(() => 'answered', (err: unknown) => String(err));
    await waitFor(() => progress >= 1, 'the first progress notification');
    if (o.cancel === true) abort.abort('the app gave up');
    if (o.cut !== false) proxy.partition();
    firstOutcome = await first;
    proxy.heal();
    if (o.reissue) {
      const again = await client.callTool({ name: 'report', arguments: { topic: 'q3' } }, undefined, { timeout: 5_000 });
      assert.match(JSON.stringify(again), /report on q3/);
    }
    await waitFor(() => runs.finished >= runs.started, 'every handler to finish');
  } finally {
    await client.close().catch(() => {});
    await proxy.close();
    await new Promise<void>((r) => http.close(() => r()));
  }
  const spans = [...serverSpans.getFinishedSpans(), ...clientSpans.getFinishedSpans()];
  if (process.env.DEBUG_STATELESS) for (const s of spans) console.log(s.name, s.spanContext().traceId.slice(0, 8), JSON.stringify(s.attributes));
  const traces = { client: new Set<string>(), server: new Set<string>() };
  for (const s of spans) {
    if (!String(s.name).startsWith('forkwatch.request.') || s.attributes['mcp.method.name'] !== 'tools/call') continue;
    (s.attributes['forkwatch.side'] === 'client' ? traces.client : traces.server).add(s.spanContext().traceId);
  }
  const h = harness();
  for (let i = 0; i < spans.length; i += 8) {
    h.ingest(decodeJson(Buffer.from(JsonTraceSerializer.serializeRequest(spans.slice(i, i + 8))!).toString('utf8')).spans);
  }
  h.advance(10_000);
  h.advance(30_000);
  return { kinds: h.kinds(), firstOutcome, runs, traces };
}

test('1.x stateless: a call cut mid-stream and never re-issued (the client waits to its timeout) is orphaned_request; client and server spans share its trace', { timeout: 30_000 }, async () => {
  const r = await run({ reissue: false });
  assert.match(r.firstOutcome, /timed out/i, 'the 1.x client hung to its timeout');
  assert.deepEqual(r.kinds, ['orphaned_request']);
  assert.equal(r.traces.client.size, 1, 'one trace for the call on the client');
  assert.deepEqual([...r.traces.server], [...r.traces.client], 'the server joined the client trace');
});

test('1.x stateless: the same cut, re-issued after the timeout: no orphan, never a fork', { timeout: 30_000 }, async () => {
  const r = await run({ reissue: true });
  assert.ok(!r.kinds.includes('orphaned_request'), r.kinds.join(','));
  assert.deepEqual(r.kinds.filter((k) => (FORK_KINDS as readonly string[]).includes(k)), []);
});

test('1.x stateless: a call the app cancels itself (stream not cut) is never an orphan', { timeout: 30_000 }, async () => {
  const r = await run({ reissue: false, cut: false, cancel: true });
  assert.match(r.firstOutcome, /gave up|abort/i);
  assert.ok(!r.kinds.includes('orphaned_request'), r.kinds.join(','));
});
