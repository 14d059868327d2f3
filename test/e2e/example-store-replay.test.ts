/**
 * A real SDK 1.x server with the SDK examples' `InMemoryEventStore`, a real instrumented client,
 * both sides' spans through the detector's engine. That store's ids are `stream_ms_random` and its
 * replay sorts them as strings, so events stored in one millisecond come back in random order:
 * a resume then skips events stored after the cursor whose random part sorts lower. The random
 * part is replaced here by a counter running down (the unlucky draw) or up (the lucky one), ids
 * otherwise as the store makes them and all in one millisecond, so each run is the same.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import { createClientInstrumentation } from '../../packages/instrumentation/src/client/client-instrumentation.js';
import { createServerInstrumentation } from '../../packages/instrumentation/src/server/server-instrumentation.js';
import { SPAN_RESUME } from '../../packages/instrumentation/src/semconv.js';
import type { Finding } from '../../src/model/finding.js';
import { decodeJson } from '../../src/otlp/decode-json.js';
import { harness } from '../correlate/harness.js';

const SALT = 'example-store';
const ONE_MS = 1_767_225_600_000;

interface Run {
  /** Progress values the client's callback saw, in order. */
  seen: number[];
  resultText: string | undefined;
  findings: Finding[];
}

/**
 * A tool sends progress 1, the client's stream is cut on it, progress 2 and 3 are stored while
 * it is away, the client resumes from progress 1 (`Last-Event-ID`), then progress 4 and the result
 * go out on the resumed stream.
 */
async function run(order: 'down' | 'up'): Promise<Run> {
  const sExp = new InMemorySpanExporter();
  const cExp = new InMemorySpanExporter();
  const provider = (e: InMemorySpanExporter, service: string): BasicTracerProvider =>
    new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': service }), spanProcessors: [new SimpleSpanProcessor(e)] });
  const sInst = createServerInstrumentation({ tracerProvider: provider(sExp, 'example-server'), salt: SALT });
  const store = new InMemoryEventStore();
  let n = order === 'down' ? 36 ** 5 : 36 ** 4;
  // Set on the instance: the SDK declares generateEventId private.
  (store as unknown as { generateEventId(s: string): string }).generateEventId = (s) =>
    `${s}_${ONE_MS}_${(order === 'down' ? n-- : n++).toString(36)}`;
  let cutDone!: () => void;
  const cut = new Promise<void>((r) => (cutDone = r));
  let resumed!: () => void;
  const afterResume = new Promise<void>((r) => (resumed = r));
  let stored = false;
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const posts: Socket[] = [];
  const tool = (): McpServer => {
    const m = new McpServer({ name: 'example-server', version: '1.0.0' });
    m.registerTool('steps', {}, async (extra) => {
      const token = extra._meta?.progressToken;
      const progress = (k: number) => (token === undefined ? undefined : extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: k, total: 4 } }));
      await progress(1);
      await cut;
      await progress(2);
      await progress(3);
      stored = true;
      await afterResume;
      await progress(4);
      return { content: [{ type: 'text', text: 'done' }] };
    });
    return m;
  };
  const http: Server = createServer(
    sInst.wrapHandler(async (req, res) => {
      const sid = req.headers['mcp-session-id'] as string | undefined;
      if (req.method === 'POST' && sid !== undefined) posts.push(req.socket);
      const existing = sid ? transports.get(sid) : undefined;
      if (existing) return existing.handleRequest(req, res);
      const t: StreamableHTTPServerTransport = sInst.observeTransport(
        new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID, eventStore: store, onsessioninitialized: (id) => void transports.set(id, t) }),
      );
      await tool().connect(t);
      return t.handleRequest(req, res);
    }),
  );
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const url = new URL(`http://127.0.0.1:${(http.address() as { port: number }).port}/mcp`);
  const cInst = createClientInstrumentation({ tracerProvider: provider(cExp, 'example-client'), salt: SALT });
  const transport = new StreamableHTTPClientTransport(url, {
    fetch: cInst.wrapFetch(),
    reconnectionOptions: { initialReconnectionDelay: 20, maxReconnectionDelay: 100, reconnectionDelayGrowFactor: 1, maxRetries: 5 },
  });
  const client = new Client({ name: 'example-client', version: '1.0.0' });
  cInst.attach(transport, client);
  const seen: number[] = [];
  let resultText: string | undefined;
  try {
    await client.connect(transport);
    const call = client.callTool({ name: 'steps', arguments: {} }, undefined, {
      timeout: 15_000,
      onprogress: (p) => {
        seen.push(p.progress);
        if (seen.length === 1) {
          // The tools/call POST is the latest request with a session id: cut its stream.
          posts.at(-1)!.destroy();
          setTimeout(cutDone, 20);
        }
      },
    });
    // Progress 4 only once the client has resumed, so that it goes out live on the resumed stream.
    while (!stored || sExp.getFinishedSpans().every((s) => s.name !== SPAN_RESUME)) await new Promise((r) => setTimeout(r, 10));
    resumed();
    const result = await call;
    resultText = (result.content as Array<{ text?: string }>)[0]?.text;
  } finally {
    await client.close().catch(() => undefined);
    http.closeAllConnections();
    await new Promise<void>((r) => http.close(() => r()));
  }
  const h = harness();
  const spans = [...sExp.getFinishedSpans(), ...cExp.getFinishedSpans()];
  h.ingest(decodeJson(Buffer.from(JsonTraceSerializer.serializeRequest(spans)!).toString('utf8')).spans);
  h.engine.decideAll();
  return { seen, resultText, findings: h.findings };
}

test("the SDK example store's replay out of order loses the progress stored after the cursor: replay_gap, from the server's spans", { timeout: 30_000 }, async () => {
  const r = await run('down');
  assert.equal(r.resultText, 'done');
  assert.deepEqual(r.seen, [1, 4], 'progress 2 and 3 were stored after the cursor and never replayed');
  assert.deepEqual(r.findings.map((f) => f.kind), ['replay_gap']);
  const f = r.findings[0]!;
  assert.match(f.summary, /re-sent \S+ \(seq \d+\), sent before it: its event store does not replay in the order it stored/);
  assert.ok(f.evidence.some((e) => e.side === 'server' && /server replayed/.test(e.shows)));
  assert.equal(f.service, 'example-server');
});

test('the same store with ids that sort in the order stored: every progress arrives, nothing is reported', { timeout: 30_000 }, async () => {
  const r = await run('up');
  assert.equal(r.resultText, 'done');
  assert.deepEqual(r.seen, [1, 2, 3, 4]);
  assert.deepEqual(r.findings.map((f) => f.kind), []);
});
