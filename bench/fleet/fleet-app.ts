/**
 * One app process of `npm run bench -- fleet` (bench/fleet/run-fleet.ts starts it): a real MCP
 * SDK 1.x server (InMemoryEventStore, so every SSE event is resumable) and an app calling it
 * through stock SDK 1.x clients, session after session, with the fleet's mix
 * (bench/fleet/fleet-mix.ts); beside that traffic, the seed scenario (src/demo/seed-scenario.ts:
 * its own naive server, the fault proxy cutting the stream) run `breaks` times with a healthy
 * resume and `forks` times with a reap in between, the real fork.
 *
 * `FLEET_MODE=instrumented`: both sides of everything instrumented with forkwatch, OTLP/protobuf
 * to `FLEET_OTLP_URL` (the gateway). `plain`: the same app without forkwatch, its bulk calls sent
 * to the URL the parent gives (the forkwatch proxy in front of this server).
 *
 * Protocol on stdio: prints `ready <server url>`; reads `go <target url>`; runs; prints
 * `done <json FleetAppResult>`; exits on `exit` (the parent reads /proc/<pid>/stat between).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { z } from 'zod';
import { createServerInstrumentation } from '@forkwatch/instrumentation/server';
import { createClientInstrumentation } from '@forkwatch/instrumentation/client';
import { runSeedScenario } from '../../src/demo/seed-scenario.js';
import { seededRandom } from '../corpus/seeded-random.js';
import { planCall, planSeedRuns, type FleetAppResult, type SeedRun } from './fleet-mix.js';

const mode = process.env.FLEET_MODE === 'instrumented' ? 'instrumented' : 'plain';
const otlpUrl = process.env.FLEET_OTLP_URL ?? '';
const calls = Number(process.env.FLEET_CALLS ?? 1000);
const lanes = Number(process.env.FLEET_CONCURRENCY ?? 8);
const breaks = Number(process.env.FLEET_BREAKS ?? 10);
const forks = Number(process.env.FLEET_FORKS ?? 3);
const seed = Number(process.env.FLEET_SEED ?? 1);
const salt = process.env.FORKWATCH_SESSION_SALT ?? '';
const instrumented = mode === 'instrumented';

const providers: BasicTracerProvider[] = [];
const spans = { bulk: 0, seed: 0, byName: {} as Record<string, number> };
/** The OTLP exporter, counting what it is handed: the app's spans by name, bulk traffic apart from the seed runs. */
const countingExporter = (service: string): SpanExporter => {
  const inner = new OTLPTraceExporter({ url: `${otlpUrl}/v1/traces` });
  const seedRun = service.includes('-seed');
  return {
    export: (batch: ReadableSpan[], done: Parameters<SpanExporter['export']>[1]) => {
      if (seedRun) spans.seed += batch.length;
      else spans.bulk += batch.length;
      for (const s of batch) spans.byName[s.name] = (spans.byName[s.name] ?? 0) + 1;
      inner.export(batch, done);
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush(),
  };
};
const provider = (service: string): BasicTracerProvider => {
  const p = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': service }),
    spanProcessors: [new BatchSpanProcessor(countingExporter(service))],
  });
  providers.push(p);
  return p;
};

/** The app's one tool: works `ms`, sending `steps` progress notifications when asked for them. */
function buildMcp(): McpServer {
  const mcp = new McpServer({ name: 'fleet-server', version: '1.0.0' });
  mcp.registerTool('work', { description: 'works a while', inputSchema: { ms: z.number(), steps: z.number() } }, async ({ ms, steps }, extra) => {
    const token = extra._meta?.progressToken;
    const n = Math.max(1, steps);
    for (let i = 1; i <= n; i++) {
      await new Promise((r) => setTimeout(r, ms / n));
      if (token !== undefined && steps > 0) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: steps } });
    }
    return { content: [{ type: 'text', text: `worked ${ms} ms` }] };
  });
  return mcp;
}

const serverFw = instrumented ? createServerInstrumentation({ tracerProvider: provider(`fleet-${mode}-server`), salt }) : undefined;
const clientFw = instrumented ? createClientInstrumentation({ tracerProvider: provider(`fleet-${mode}-client`), salt }) : undefined;
const transports = new Map<string, StreamableHTTPServerTransport>();
const handler = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
  const id = req.headers['mcp-session-id'];
  let transport = typeof id === 'string' ? transports.get(id) : undefined;
  if (!transport) {
    if (typeof id === 'string') {
      res.writeHead(404).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
      return;
    }
    const t = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      eventStore: new InMemoryEventStore(),
      onsessioninitialized: (sid) => void transports.set(sid, t),
    });
    t.onclose = () => void (t.sessionId && transports.delete(t.sessionId));
    transport = serverFw ? serverFw.observeTransport(t) : t;
    await buildMcp().connect(transport);
  }
  await transport.handleRequest(req, res);
};
const http = createServer(serverFw ? serverFw.wrapHandler(handler) : handler);
await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
const serverUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;

const lines = createInterface({ input: process.stdin });
const waiting: Array<(line: string) => void> = [];
lines.on('line', (l) => waiting.shift()?.(l));
const nextLine = (): Promise<string> => new Promise((r) => waiting.push(r));

process.stdout.write(`ready ${serverUrl}\n`);
const go = await nextLine();
const target = go.startsWith('go ') ? go.slice(3).trim() : serverUrl;

const rnd = seededRandom(seed);
// The calls planned up front, so both apps make the same calls whatever order their lanes take them in.
const longShare = Number(process.env.FLEET_LONG_SHARE ?? 0.1);
const planned = Array.from({ length: calls }, () => planCall(rnd, longShare));
const result: FleetAppResult = { mode, bulkCalls: 0, bulkFailed: 0, longCalls: 0, progress: 0, sessions: 0, seedRuns: [] };
let started = 0;

/** One lane: sessions one after another, each a few calls, then a DELETE, until the calls run out. */
async function lane(): Promise<void> {
  while (started < calls) {
    const transport = new StreamableHTTPClientTransport(new URL(target), clientFw ? { fetch: clientFw.wrapFetch(fetch) } : {});
    const client = new Client({ name: 'fleet-app', version: '1.0.0' });
    if (clientFw) clientFw.attach(transport, client);
    await client.connect(transport);
    result.sessions++;
    const perSession = 3 + Math.floor(rnd() * 13);
    for (let i = 0; i < perSession && started < calls; i++) {
      const c = planned[started++]!;
      if (c.steps > 0) result.longCalls++;
      try {
        await client.callTool({ name: 'work', arguments: { ms: c.ms, steps: c.steps } }, undefined, c.steps > 0 ? { onprogress: () => void result.progress++, timeout: 30_000 } : { timeout: 30_000 });
        result.bulkCalls++;
      } catch {
        result.bulkFailed++;
      }
    }
    await transport.terminateSession().catch(() => undefined);
    await client.close();
  }
}

/** The seed scenario, `breaks` healthy cuts and `forks` forks in a seeded order, one at a time. */
async function seedLane(): Promise<void> {
  const plan = planSeedRuns(breaks, forks, seed);
  for (const [i, kind] of plan.entries()) {
    const service = `fleet-${mode}-seed${i}-${kind}`;
    const server = instrumented ? provider(`${service}-server`) : undefined;
    const client = instrumented ? provider(`${service}-client`) : undefined;
    const r = await runSeedScenario({
      server: 'naive',
      client: 'stock',
      healthy: kind === 'break',
      scale: 2,
      salt,
      tracerProviders: { ...(server ? { server } : {}), ...(client ? { client } : {}) },
    });
    const run: SeedRun = { service, injected: kind, forked: r.sessions.rehydrated > 0, calls: r.calls.length, resumes: r.resumes.length };
    result.seedRuns.push(run);
  }
}

await Promise.all([seedLane(), ...Array.from({ length: lanes }, lane)]);
await Promise.all(providers.map((p) => p.forceFlush()));
result.spans = spans;
process.stdout.write(`done ${JSON.stringify(result)}\n`);
await nextLine();
await Promise.all(providers.map((p) => p.shutdown()));
for (const t of transports.values()) await t.close().catch(() => undefined);
http.closeAllConnections();
http.close();
process.exit(0);
