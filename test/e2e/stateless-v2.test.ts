/**
 * The stateless arm end to end: SDK 2.x `createMcpHandler` (2026-07-28, no session) served through
 * `toNodeHandler`, a 2.x client negotiating the modern era, the demo's fault proxy cutting the
 * response stream mid tool call, forkwatch's stateless instrumentation on both sides, and the
 * detector's engine over the spans they emitted (serialized as OTLP JSON).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { McpServer, createMcpHandler, fromJsonSchema } from '@modelcontextprotocol/server';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { propagation } from '@opentelemetry/api';
import { createStatelessClientTap } from '@forkwatch/instrumentation/client/v2';
import { observeStatelessServers } from '@forkwatch/instrumentation/server/v2';
import { FaultProxy } from '../../src/demo/fault-proxy.js';
import { decodeJson } from '../../src/otlp/decode-json.js';
import { FORK_KINDS } from '../../src/model/finding.js';
import { harness } from '../correlate/harness.js';

const STEPS = 6;
const STEP_MS = 60;
const DEADLINE_MS = 10_000;

interface Run {
  kinds: string[];
  /** `forkwatch.request.outcome` of each client `request.settled`. */
  outcomes: string[];
  runs: { started: number; completed: number; stopped: number };
  /** `mcp.protocol.version` of each server `request.handled`. */
  handledVersions: string[];
}

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

/**
 * One charge call cut after its first progress notification; `reissue`: the app calls again with
 * the same arguments. `cancel`: the app aborts the call itself (AbortSignal) instead of a cut;
 * `negotiation`: the client's era (default `auto`: 2026-07-28, where the abort closes the stream;
 * `legacy`: the 2025 handshake, where it sends `notifications/cancelled`).
 */
async function run(o: { serverStops: boolean; reissue: boolean; cancel?: boolean; negotiation?: 'auto' | 'legacy'; serverOnly?: boolean }): Promise<Run> {
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const serverSpans = new InMemorySpanExporter();
  const clientSpans = new InMemorySpanExporter();
  const runs = { started: 0, completed: 0, stopped: 0 };
  const factory = () => {
    const s = new McpServer({ name: 'stateless-v2', version: '0.1.0' });
    s.registerTool(
      'charge',
      { description: 'charges a card slowly', inputSchema: fromJsonSchema<{ card: string; cents: number }>({ type: 'object', properties: { card: { type: 'string' }, cents: { type: 'number' } } }) },
      async (args, ctx) => {
        runs.started++;
        const token = ctx.mcpReq._meta?.progressToken;
        for (let i = 1; i <= STEPS; i++) {
          await new Promise((r) => setTimeout(r, STEP_MS));
          if (o.serverStops && ctx.mcpReq.signal.aborted) {
            runs.stopped++;
            throw new Error('cancelled: the response stream closed');
          }
          if (token !== undefined) await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: STEPS } }).catch(() => {});
        }
        runs.completed++;
        return { content: [{ type: 'text' as const, text: `charged ${args.cents} to ${args.card}` }] };
      },
    );
    return s;
  };
  const handler = createMcpHandler(observeStatelessServers(factory, { tracerProvider: provider(serverSpans, 'pay-server') }));
  const http: Server = createServer(toNodeHandler(handler) as never);
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', () => r()));
  const port = (http.address() as { port: number }).port;
  const proxy = await FaultProxy.start({ targetPort: port, mode: 'refuse' });
  const tap = createStatelessClientTap({ tracerProvider: provider(clientSpans, 'pay-client') });
  const client = new Client({ name: 'pay-app', version: '0.1.0' }, { versionNegotiation: { mode: o.negotiation ?? 'auto' } });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(proxy.url('/mcp')), { fetch: tap.wrapFetch(fetch) as never }), { timeout: 5_000 });
    const args = { card: 'tok_4242', cents: 1999 };
    let progress = 0;
    const abort = new AbortController();
    const first = client
      .callTool({ name: 'charge', arguments: args }, { timeout: 5_000, signal: abort.signal, onprogress: () => void progress++ })
      .then(() => 'answered' as const, () => 'failed' as const);
    await waitFor(() => progress >= 1, 'the first progress notification');
    if (o.cancel === true) abort.abort('the app gave up');
    else proxy.partition();
    assert.equal(await first, 'failed', 'the cut or cancelled call did not get its answer');
    proxy.heal();
    if (o.reissue) {
      const again = await client.callTool({ name: 'charge', arguments: args }, { timeout: 5_000 });
      assert.match(JSON.stringify(again), /charged 1999 to tok_4242/);
    }
    await waitFor(() => runs.completed + runs.stopped >= runs.started, 'every handler to finish');
  } finally {
    await client.close().catch(() => {});
    await proxy.close();
    await handler.close();
    await new Promise<void>((r) => http.close(() => r()));
  }
  // serverOnly: a stock client (its spans are not read), the server instrumented.
  const spans = [...serverSpans.getFinishedSpans(), ...(o.serverOnly === true ? [] : clientSpans.getFinishedSpans())];
  if (process.env.DEBUG_STATELESS) for (const s of spans) console.log(s.name, s.spanContext().traceId.slice(0, 8), JSON.stringify(s.attributes));
  const h = harness();
  for (let i = 0; i < spans.length; i += 8) {
    h.ingest(decodeJson(Buffer.from(JsonTraceSerializer.serializeRequest(spans.slice(i, i + 8))!).toString('utf8')).spans);
  }
  h.advance(10_000);
  h.advance(30_000);
  const outcomes = clientSpans.getFinishedSpans().filter((x) => x.name === 'forkwatch.request.settled').map((x) => String(x.attributes['forkwatch.request.outcome']));
  const handledVersions = serverSpans.getFinishedSpans().filter((x) => x.name === 'forkwatch.request.handled').map((x) => String(x.attributes['mcp.protocol.version']));
  return { kinds: h.kinds(), outcomes, runs, handledVersions };
}

test('cut mid tool call, re-issued, server did not stop the first: duplicate_execution and work_after_cancel (never a fork)', { timeout: 30_000 }, async () => {
  const r = await run({ serverStops: false, reissue: true });
  assert.equal(r.runs.completed, 2, 'the server really ran the charge twice');
  assert.ok(r.kinds.includes('duplicate_execution'), r.kinds.join(','));
  assert.ok(r.kinds.includes('work_after_cancel'), `the first run kept notifying after the cut: ${r.kinds.join(',')}`);
  assert.ok(!r.kinds.includes('orphaned_request'), r.kinds.join(','));
  assert.deepEqual(r.kinds.filter((k) => (FORK_KINDS as readonly string[]).includes(k)), []);
});

test('cut mid tool call, re-issued, server stopped the first on the close: nothing', { timeout: 30_000 }, async () => {
  const r = await run({ serverStops: true, reissue: true });
  assert.equal(r.runs.stopped, 1);
  assert.equal(r.runs.completed, 1);
  assert.deepEqual(r.kinds, []);
});

test('cut mid tool call, never re-issued: orphaned_request', { timeout: 30_000 }, async () => {
  const r = await run({ serverStops: true, reissue: false });
  assert.deepEqual(r.kinds, ['orphaned_request']);
});

test('the app cancels its call itself (2026 era: the abort closes the stream), the server works on: work_after_cancel, never orphaned_request', { timeout: 30_000 }, async () => {
  const r = await run({ serverStops: false, reissue: false, cancel: true });
  assert.equal(r.runs.completed, 1, 'the server finished the charge nobody waited for');
  assert.ok(!r.kinds.includes('orphaned_request'), r.kinds.join(','));
  assert.deepEqual(r.outcomes, ['cancelled']);
  assert.deepEqual(r.kinds, ['work_after_cancel']);
});

test('the app cancels its call itself, the server stops on the close: nothing', { timeout: 30_000 }, async () => {
  const r = await run({ serverStops: true, reissue: false, cancel: true });
  assert.equal(r.runs.stopped, 1);
  assert.deepEqual(r.kinds, []);
});

test('the app cancels its call itself in the 2025 era (notifications/cancelled, stream not cut): never orphaned_request', { timeout: 30_000 }, async () => {
  const r = await run({ serverStops: false, reissue: false, cancel: true, negotiation: 'legacy' });
  assert.deepEqual(r.outcomes, ['cancelled'], 'the tap read the app\'s notifications/cancelled');
  assert.ok(!r.kinds.includes('orphaned_request'), r.kinds.join(','));
});

// The boundary (docs/telemetry.md): on 2026-07-28 closing the stream is the cancel, so the server alone
// cannot tell the app's abort from a cut. Its request.handled names the revision; the detector reports
// neither as orphaned_request without the client's settle (corpus: stateless/sdk-2.x stock app-cancel).
test('2026 era, server spans alone: the app\'s abort is no orphaned_request (the close is its cancel)', { timeout: 30_000 }, async () => {
  const r = await run({ serverStops: true, reissue: false, cancel: true, serverOnly: true });
  assert.deepEqual(r.handledVersions, ['2026-07-28']);
  assert.deepEqual(r.kinds, []);
});

test('2026 era, server spans alone: a cut never re-issued is the same bytes, out of sight (the instrumented client finds it, above)', { timeout: 30_000 }, async () => {
  const r = await run({ serverStops: true, reissue: false, serverOnly: true });
  assert.deepEqual(r.handledVersions, ['2026-07-28']);
  assert.deepEqual(r.kinds, []);
});

test('2025 era, server spans alone: a cut never re-issued is an orphaned_request (a close is no cancel there)', { timeout: 30_000 }, async () => {
  const r = await run({ serverStops: true, reissue: false, negotiation: 'legacy', serverOnly: true });
  assert.notDeepEqual(r.handledVersions, ['2026-07-28']);
  assert.deepEqual(r.kinds, ['orphaned_request']);
});
