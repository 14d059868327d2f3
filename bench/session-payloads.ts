/**
 * Payloads of the sessions benchmark (bench/sessions.ts): healthy MCP sessions as the real
 * instrumentation exports them. A real SDK 1.32.2 server and client over loopback HTTP, both sides
 * instrumented (createServerInstrumentation / createClientInstrumentation, default options), run
 * `templates` sessions of initialize, tools/list and three `echo` calls, then close; each side's
 * spans are exported through its own provider (its own resource, as two processes of a fleet) and
 * serialized by the SDK's own OTLP protobuf serializer. A request body holds whole sessions, up to
 * BatchSpanProcessor's 512 spans. Forks for the lag phase are the seed scenario's spans
 * (test/fixtures/scenarios), one fork session per body. Made in a child process (the SDK's globals
 * and the MCP servers stay out of the measuring process).
 */
import { spawnSync } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ROOT_CONTEXT, SpanKind, trace, type Context } from '@opentelemetry/api';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';
import { createServerInstrumentation } from '../packages/instrumentation/src/server/index.js';
import { createClientInstrumentation } from '../packages/instrumentation/src/client/index.js';
import { ATTR_SESSION_KEY } from '../packages/instrumentation/src/semconv.js';
import { seedScenario } from '../test/fixtures/scenarios/scenarios.js';

/** Request bodies of healthy sessions, and the same with one fork session added to each. */
export interface SessionPayloads {
  /** Healthy sessions only. */
  healthy: Uint8Array[];
  /** The same bodies, each with one seed-scenario fork session added. */
  withForks: Uint8Array[];
  /** Healthy sessions per body (every body the same). */
  sessionsPerBody: number;
  /** forkwatch spans per healthy session (the real instrumentation's count). */
  spansPerSession: number;
  /** forkwatch spans per healthy body, and per body with its fork. */
  spansPerBody: number;
  spansPerForkBody: number;
  /** Span names of one healthy session, in export order. */
  sessionSpanNames: string[];
}

const BATCH = 512;

function provider(service: string, exporter: InMemorySpanExporter): BasicTracerProvider {
  return new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': service, 'service.version': '1.4.2', 'telemetry.sdk.language': 'nodejs', 'telemetry.sdk.name': 'opentelemetry' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
}

/** Runs `n` real healthy sessions; resolves each side's spans per session, in end order. */
export async function runSessions(n: number): Promise<{ server: ReadableSpan[][]; client: ReadableSpan[][] }> {
  const serverSpans = new InMemorySpanExporter();
  const clientSpans = new InMemorySpanExporter();
  const serverProvider = provider('mcp-server', serverSpans);
  const clientProvider = provider('mcp-client', clientSpans);
  const serverFw = createServerInstrumentation({ tracerProvider: serverProvider });
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const handler = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? transports.get(id) : undefined;
    if (!transport) {
      const t = new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID, onsessioninitialized: (sid) => void transports.set(sid, t) });
      t.onclose = () => {
        if (t.sessionId !== undefined) transports.delete(t.sessionId);
      };
      const mcp = new McpServer({ name: 'bench', version: '1.0.0' });
      mcp.registerTool('echo', { description: 'echo', inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
      transport = serverFw.observeTransport(t);
      await mcp.connect(transport);
    }
    await transport.handleRequest(req, res);
  };
  const http = createServer(serverFw.wrapHandler(handler));
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const url = new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
  const clientFw = createClientInstrumentation({ tracerProvider: clientProvider });
  const server: ReadableSpan[][] = [];
  const client: ReadableSpan[][] = [];
  for (let i = 0; i < n; i++) {
    const transport = new StreamableHTTPClientTransport(url, { fetch: clientFw.wrapFetch(fetch) });
    const c = new Client({ name: 'bench-client', version: '1.0.0' });
    clientFw.attach(transport, c);
    await c.connect(transport);
    await c.listTools();
    for (let k = 0; k < 3; k++) await c.callTool({ name: 'echo', arguments: { text: `hello ${k}` } });
    await transport.terminateSession();
    await c.close();
    await serverProvider.forceFlush();
    await clientProvider.forceFlush();
    server.push(serverSpans.getFinishedSpans().slice());
    client.push(clientSpans.getFinishedSpans().slice());
    serverSpans.reset();
    clientSpans.reset();
  }
  http.closeAllConnections();
  await new Promise<void>((r) => http.close(() => r()));
  await serverProvider.forceFlush();
  await clientProvider.forceFlush();
  // Spans a side ends at shutdown (a session's end) belong to the last session.
  server[n - 1]!.push(...serverSpans.getFinishedSpans());
  client[n - 1]!.push(...clientSpans.getFinishedSpans());
  return { server, client };
}

/** The seed fork as SDK spans (fixture records replayed through a tracer), server and client apart. */
function forkSpans(): { server: ReadableSpan[]; client: ReadableSpan[] } {
  const sc = seedScenario({ sessionId: 'bench-fork', t0: Date.now() - 60_000 });
  const out = (records: typeof sc.server, service: string): ReadableSpan[] => {
    const exp = new InMemorySpanExporter();
    const tracer = provider(service, exp).getTracer('@forkwatch/instrumentation', '0.2.0');
    let ctx: Context = ROOT_CONTEXT;
    for (const r of records) {
      const s = tracer.startSpan(r.name, { kind: SpanKind.INTERNAL, startTime: r.startMs, attributes: r.attributes }, ctx);
      if (ctx === ROOT_CONTEXT) ctx = trace.setSpan(ROOT_CONTEXT, s);
      s.end(Math.max(r.startMs + 0.001, r.endMs));
    }
    return exp.getFinishedSpans();
  };
  return { server: out(sc.server, 'mcp-server'), client: out(sc.client, 'mcp-client') };
}

/** Builds the payloads from `templates` real sessions (each body: whole sessions, both sides). */
export async function makeSessionPayloads(templates: number): Promise<SessionPayloads> {
  const { server, client } = await runSessions(templates);
  const fork = forkSpans();
  const perSession = server[0]!.length + client[0]!.length;
  const sessionsPerBody = Math.max(1, Math.floor(BATCH / perSession));
  const healthy: Uint8Array[] = [];
  const withForks: Uint8Array[] = [];
  let spansPerBody = 0;
  for (let i = 0; i + sessionsPerBody <= templates; i += sessionsPerBody) {
    const spans: ReadableSpan[] = [];
    for (let k = i; k < i + sessionsPerBody; k++) spans.push(...server[k]!, ...client[k]!);
    spansPerBody = spans.length;
    healthy.push(ProtobufTraceSerializer.serializeRequest(spans)!);
    withForks.push(ProtobufTraceSerializer.serializeRequest([...spans, ...fork.server, ...fork.client])!);
  }
  return {
    healthy,
    withForks,
    sessionsPerBody,
    spansPerSession: perSession,
    spansPerBody,
    spansPerForkBody: spansPerBody + fork.server.length + fork.client.length,
    sessionSpanNames: [...server[0]!, ...client[0]!].map((s) => s.name),
  };
}

/** {@link makeSessionPayloads} in a child process. */
export function loadSessionPayloads(templates: number): SessionPayloads {
  const dir = mkdtempSync(join(tmpdir(), 'forkwatch-session-payloads-'));
  try {
    const out = join(dir, 'payloads.json');
    const execArgv = process.execArgv.filter((a, i, all) => !/^--(cpu|heap)-prof/.test(a) && !/^--(cpu|heap)-prof-(dir|name)$/.test(all[i - 1] ?? ''));
    const r = spawnSync(process.execPath, [...execArgv, fileURLToPath(import.meta.url), String(templates), out], { stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`payload child failed: ${r.status ?? r.signal}`);
    const j = JSON.parse(readFileSync(out, 'utf8')) as Omit<SessionPayloads, 'healthy' | 'withForks'> & { healthy: string[]; withForks: string[] };
    const bodies = (a: string[]): Uint8Array[] => a.map((s) => Buffer.from(s, 'base64'));
    return { ...j, healthy: bodies(j.healthy), withForks: bodies(j.withForks) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export { ATTR_SESSION_KEY };

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [templates, out] = process.argv.slice(2);
  const p = await makeSessionPayloads(Number(templates));
  const b64 = (a: Uint8Array[]): string[] => a.map((b) => Buffer.from(b).toString('base64'));
  writeFileSync(out!, JSON.stringify({ ...p, healthy: b64(p.healthy), withForks: b64(p.withForks) }));
  process.exit(0);
}
