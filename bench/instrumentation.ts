/**
 * Instrumentation overhead: tool calls per second through a real MCP SDK client and server over
 * real HTTP on loopback, with and without forkwatch instrumentation on both sides, measured in
 * interleaved rounds in one process so machine noise hits both variants alike.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TracerProvider } from '@opentelemetry/api';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import { z } from 'zod';
import { createServerInstrumentation } from '../packages/instrumentation/src/server/index.js';
import { createClientInstrumentation } from '../packages/instrumentation/src/client/index.js';
import { decodeProtobuf } from '../src/otlp/decode-protobuf.js';
import { quantile, seededRandom } from './resample.js';

interface Variant {
  name: string;
  app: BenchApp;
  url: string;
  client: Client;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

/** What an {@link otlpSink} received: spans by name, every export request decoded. */
export interface SinkCounts {
  bytes: number;
  /** Every span received (forkwatch and foreign). */
  spans: number;
  /** forkwatch spans by name. */
  byName: Record<string, number>;
}

/**
 * An OTLP/protobuf sink that accepts, counts and discards: the exporter does its real work, and
 * the bench can say how many spans a variant exported (decoded with the detector's own decoder,
 * so a span the detector would not read is not counted as forkwatch's).
 */
export async function otlpSink(): Promise<{ url: string; counts: () => SinkCounts; close(): Promise<void> }> {
  const counts: SinkCounts = { bytes: 0, spans: 0, byName: {} };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      counts.bytes += body.length;
      try {
        const r = decodeProtobuf(body);
        counts.spans += r.total;
        for (const sp of r.spans) counts.byName[sp.name] = (counts.byName[sp.name] ?? 0) + 1;
      } catch {
        // Not OTLP protobuf: counted in bytes only.
      }
      res.writeHead(200, { 'content-type': 'application/x-protobuf' });
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`,
    counts: () => ({ ...counts, byName: { ...counts.byName } }),
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** Progress notifications the `progress` tool sends per call (each an SSE event with an event store). */
export const PROGRESS_PER_CALL = 5;

function buildMcp(): McpServer {
  const mcp = new McpServer({ name: 'bench', version: '1.0.0' });
  mcp.registerTool('echo', { description: 'echo', inputSchema: { text: z.string() } }, async ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  mcp.registerTool('progress', { description: 'progress', inputSchema: { text: z.string() } }, async ({ text }, extra) => {
    const token = extra._meta?.progressToken;
    if (token !== undefined) {
      for (let i = 1; i <= PROGRESS_PER_CALL; i++) {
        await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: PROGRESS_PER_CALL } });
      }
    }
    return { content: [{ type: 'text', text }] };
  });
  return mcp;
}

/**
 * The app measured: `echo` on a server without an event store (nothing resumable), or `progress`
 * (5 progress notifications per call, the caller asking for them) on a server with the SDK's
 * InMemoryEventStore, so every SSE event has an id and could be resumed.
 */
export type BenchApp = 'echo' | 'progress-store';
/** Which sides are instrumented. */
export type BenchSides = 'none' | 'both' | 'server' | 'client';

/**
 * Node's fetch with the request's AbortSignal left out, under both variants alike. The SDK hands
 * every request its transport's one signal, and undici adds a listener to it per request that
 * only a major GC removes: each request then walks a list that grows through the round (to
 * ~1,000 entries in a 1,000-call round), a cost of the SDK and undici, not of forkwatch, whose
 * size depended on the round's length and on when the last major GC ran. The benchmark never
 * aborts a request.
 */
const withoutSignal = (input: string | URL | Request, init?: RequestInit): Promise<Response> =>
  fetch(input, init?.signal ? { ...init, signal: undefined } : init);

/**
 * Starts the app with `instrumented` sides. Each instrumented side exports through a
 * BasicTracerProvider of its own (BatchSpanProcessor, OTLP/protobuf to `otlpUrl`), registered
 * nowhere, unless `opts.tracerProvider` is given: then both sides use that one (the bench's
 * `sdk-explicit`: NodeSDK's global provider, shut down by NodeSDK, not here).
 */
export async function startVariant(
  instrumented: boolean | BenchSides,
  otlpUrl: string,
  opts: { requestSpanDelayMs?: number; deliveryTimeoutMs?: number; maxBufferedPayloadChars?: number; tracerProvider?: TracerProvider } = {},
  app: BenchApp = 'echo',
): Promise<Variant> {
  const sides: BenchSides = instrumented === true ? 'both' : instrumented === false ? 'none' : instrumented;
  const providers: BasicTracerProvider[] = [];
  const { tracerProvider: given, deliveryTimeoutMs, ...fwOpts } = opts;
  const provider = (service: string): TracerProvider => {
    if (given) return given;
    const p = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': service }),
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: otlpUrl }))],
    });
    providers.push(p);
    return p;
  };
  const serverFw = sides === 'both' || sides === 'server' ? createServerInstrumentation({ tracerProvider: provider('bench-server'), ...fwOpts }) : undefined;
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const handler = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? transports.get(id) : undefined;
    if (!transport) {
      const t = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        ...(app === 'progress-store' ? { eventStore: new InMemoryEventStore() } : {}),
        onsessioninitialized: (sid) => void transports.set(sid, t),
      });
      transport = serverFw ? serverFw.observeTransport(t) : t;
      await buildMcp().connect(transport);
    }
    await transport.handleRequest(req, res);
  };
  const http = createServer(serverFw ? serverFw.wrapHandler(handler) : handler);
  // No idle timeout on kept-alive sockets: under valgrind (~50x slower) the default 5 s closed a
  // socket the client was about to reuse, and the call failed with ECONNRESET.
  http.keepAliveTimeout = 0;
  const url = await listen(http);
  const clientFw = sides === 'both' || sides === 'client' ? createClientInstrumentation({ tracerProvider: provider('bench-client'), ...fwOpts, ...(deliveryTimeoutMs === undefined ? {} : { deliveryTimeoutMs }) }) : undefined;
  const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: clientFw ? clientFw.wrapFetch(withoutSignal) : withoutSignal });
  const client = new Client({ name: 'bench-client', version: '1.0.0' });
  if (clientFw) clientFw.attach(transport, client);
  await client.connect(transport);
  return {
    name: sides === 'none' ? 'plain' : sides,
    url,
    client,
    app,
    close: async () => {
      await client.close();
      for (const t of transports.values()) await t.close();
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
      for (const p of providers) await p.shutdown();
    },
  };
}

export /** Calls/s of one round, and the process CPU time it took per call (µs). */
async function measured(v: Variant, calls: number, concurrency: number): Promise<{ rate: number; cpuUs: number }> {
  const c0 = process.cpuUsage();
  const rate = await round(v, calls, concurrency);
  const c = process.cpuUsage(c0);
  return { rate, cpuUs: (c.user + c.system) / calls };
}

const noop = (): void => undefined;

export async function round(v: Variant, calls: number, concurrency: number): Promise<number> {
  let next = 0;
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < calls) {
        next++;
        if (v.app === 'echo') await v.client.callTool({ name: 'echo', arguments: { text: 'hello' } });
        else await v.client.callTool({ name: 'progress', arguments: { text: 'hello' } }, undefined, { onprogress: noop });
      }
    }),
  );
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  return calls / s;
}

/** A median with the uncertainty of it: what a reader needs to tell 3 % from 6 %. */
export interface Spread {
  median: number;
  /** Interquartile range of the per-pair values: how much single pairs disagree. */
  q1: number;
  q3: number;
  /** Bootstrap 90 % interval of the median (pairs resampled with replacement). */
  lo: number;
  hi: number;
}

export interface InstrumentationBenchResult {
  rounds: number;
  callsPerRound: number;
  /** Median calls/s over the rounds. */
  plainCallsPerSec: number;
  instrumentedCallsPerSec: number;
  /** Over round pairs, 1 - instrumented/plain calls/s: the share of throughput instrumentation costs. */
  overhead: Spread;
  /** Median process CPU per call, µs (client, server and exporter share the process). */
  plainCpuUsPerCall: number;
  instrumentedCpuUsPerCall: number;
  /** Over round pairs, instrumented/plain CPU per call - 1: unlike wall time, blind to other processes' load. */
  cpuOverhead: Spread;
}

/** Calls run untimed before each timed round, so a round starts with its own variant's code and sockets hot. */
const ROUND_WARMUP_CALLS = 20;

/**
 * Median, quartiles and a percentile-bootstrap 90 % interval of the median. The resampling uses a
 * fixed-seed generator so the same pairs always give the same interval.
 */
export function spread(values: number[], resamples = 10_000): Spread {
  const sorted = [...values].sort((x, y) => x - y);
  const rand = seededRandom();
  const medians = new Float64Array(resamples);
  const sample = new Array<number>(values.length);
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < values.length; i++) sample[i] = values[Math.floor(rand() * values.length)]!;
    sample.sort((x, y) => x - y);
    medians[r] = quantile(sample, 0.5);
  }
  medians.sort();
  return {
    median: quantile(sorted, 0.5),
    q1: quantile(sorted, 0.25),
    q3: quantile(sorted, 0.75),
    lo: medians[Math.floor(resamples * 0.05)]!,
    hi: medians[Math.ceil(resamples * 0.95) - 1]!,
  };
}

/**
 * Interleaved A/B rounds. Each round pair is compared on its own (pairs run back to back, so
 * drift in the machine's load hits both), and the median pair is reported with its spread.
 *
 * Every timed round starts from a full GC (when the process runs with --expose-gc, as
 * `npm run bench` does), for both variants alike: garbage one round leaves would otherwise be
 * collected in the next, which belongs to the other variant. (It also emptied undici's
 * per-request abort listener list before {@link withoutSignal} took the signal out.)
 *
 * Not finer interleaving: alternating the variants in slices of 20 or 100 calls within a round
 * was no less noisy on the shared 2-core machine (per-slice CPU per call moved ±25 % with the
 * other tenant's load), and it leaves each slice's garbage and concurrent GC work to the next
 * slice, the other variant's, which pulls the difference toward zero.
 */
export async function benchInstrumentation(opts: { rounds?: number; calls?: number; concurrency?: number; app?: BenchApp } = {}): Promise<InstrumentationBenchResult> {
  const rounds = opts.rounds ?? 21;
  const calls = opts.calls ?? 1000;
  const concurrency = opts.concurrency ?? 4;
  const gc = (globalThis as { gc?: () => void }).gc;
  const sink = await otlpSink();
  const plain = await startVariant(false, sink.url, {}, opts.app);
  const inst = await startVariant(true, sink.url, {}, opts.app);
  // Warm-up both, interleaved, long enough for the JIT to settle (throughput still climbs after 100 calls).
  for (let i = 0; i < 3; i++) {
    await round(plain, 300, concurrency);
    await round(inst, 300, concurrency);
  }
  const timed = async (v: Variant): Promise<{ rate: number; cpuUs: number }> => {
    gc?.();
    // Also lets the finalizers the GC queued run (they remove the abort listeners).
    await round(v, ROUND_WARMUP_CALLS, concurrency);
    return measured(v, calls, concurrency);
  };
  const a: Array<{ rate: number; cpuUs: number }> = [];
  const b: Array<{ rate: number; cpuUs: number }> = [];
  for (let i = 0; i < rounds; i++) {
    // Alternate which goes first so drift favours neither.
    if (i % 2 === 0) {
      a.push(await timed(plain));
      b.push(await timed(inst));
    } else {
      b.push(await timed(inst));
      a.push(await timed(plain));
    }
  }
  await plain.close();
  await inst.close();
  await sink.close();
  const median = (xs: number[]): number => quantile([...xs].sort((x, y) => x - y), 0.5);
  return {
    rounds,
    callsPerRound: calls,
    plainCallsPerSec: median(a.map((r) => r.rate)),
    instrumentedCallsPerSec: median(b.map((r) => r.rate)),
    overhead: spread(a.map((r, i) => 1 - b[i]!.rate / r.rate)),
    plainCpuUsPerCall: median(a.map((r) => r.cpuUs)),
    instrumentedCpuUsPerCall: median(b.map((r) => r.cpuUs)),
    cpuOverhead: spread(a.map((r, i) => b[i]!.cpuUs / r.cpuUs - 1)),
  };
}
