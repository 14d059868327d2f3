/**
 * `npm run bench -- proxy`: what `forkwatch proxy` adds to a tool call, side by side in one run
 * against no proxy and a bare node:http pipe proxy (keep-alive both sides). The upstream answers
 * each `tools/call` POST with an SSE stream of progress events and the result, every event with an
 * id, under one session, as an SDK server with an event store does; each event carries the time it
 * was written, so the client measures per-event latency on the same clock.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { createForkwatchProxy } from '../src/proxy/index.js';

const EVENTS_PER_CALL = 4;
const LATENCY_CALLS = 600;
const THROUGHPUT_CALLS = 1500;
const CONCURRENCY = 8;
const ROUNDS = 3;

export interface ProxyVariantResult {
  name: string;
  callP50Ms: number;
  callP99Ms: number;
  eventP50Ms: number;
  eventP99Ms: number;
  callsPerSec: number;
  cpuUsPerCall: number;
}

/** Counts spans and drops them: the export cost is the collector's, not the proxy's. */
class DiscardExporter implements SpanExporter {
  spans = 0;
  export(spans: ReadableSpan[], done: (r: { code: number }) => void): void {
    this.spans += spans.length;
    done({ code: 0 });
  }
  async shutdown(): Promise<void> {}
}

let eventSeq = 0;
function startUpstream(): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const id = (JSON.parse(Buffer.concat(chunks).toString()) as { id: number }).id;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 'bench-session' });
      let i = 0;
      const next = (): void => {
        i++;
        const last = i === EVENTS_PER_CALL;
        const msg = last
          ? { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: `done ${performance.now()}` }] } }
          : { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: id, progress: i, message: `${performance.now()}` } };
        const frame = `id: e${++eventSeq}\ndata: ${JSON.stringify(msg)}\n\n`;
        if (last) res.end(frame);
        else {
          res.write(frame);
          setImmediate(next);
        }
      };
      next();
    });
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r(server)));
}

function startBarePipe(target: number): Promise<{ server: http.Server; agent: http.Agent }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const server = http.createServer({ keepAlive: true }, (req, res) => {
    const up = http.request({ agent, host: '127.0.0.1', port: target, method: req.method, path: req.url, headers: req.headers }, (ures) => {
      res.writeHead(ures.statusCode ?? 502, ures.headers);
      ures.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r({ server, agent })));
}

/** One call; resolves to [call latency ms, per-event latencies ms]. */
function call(agent: http.Agent, port: number, id: number): Promise<[number, number[]]> {
  const t0 = performance.now();
  const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'report', arguments: {}, _meta: { progressToken: id } } });
  return new Promise((resolve, reject) => {
    const req = http.request(
      { agent, host: '127.0.0.1', port, method: 'POST', path: '/mcp', headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'mcp-session-id': 'bench-session' } },
      (res) => {
        const lat: number[] = [];
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          const now = performance.now();
          for (const m of d.matchAll(/"(?:message|text)":"(?:done )?([0-9.]+)"/g)) lat.push(now - Number(m[1]));
        });
        res.on('end', () => resolve([performance.now() - t0, lat]));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const pctl = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
};

async function measure(port: number): Promise<Omit<ProxyVariantResult, 'name'>> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const calls: number[] = [];
  const events: number[] = [];
  let id = 0;
  for (let i = 0; i < 50; i++) await call(agent, port, ++id); // warm-up
  for (let i = 0; i < LATENCY_CALLS; i++) {
    const [c, e] = await call(agent, port, ++id);
    calls.push(c);
    events.push(...e);
  }
  global.gc?.();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let left = THROUGHPUT_CALLS;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (left-- > 0) await call(agent, port, ++id);
    }),
  );
  const wall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  agent.destroy();
  return {
    callP50Ms: pctl(calls, 0.5),
    callP99Ms: pctl(calls, 0.99),
    eventP50Ms: pctl(events, 0.5),
    eventP99Ms: pctl(events, 0.99),
    callsPerSec: THROUGHPUT_CALLS / wall,
    cpuUsPerCall: (cpu.user + cpu.system) / THROUGHPUT_CALLS,
  };
}

/** Runs the variants interleaved for ROUNDS rounds; per variant, the median round of each figure. */
export async function benchProxy(): Promise<{ variants: ProxyVariantResult[]; spansEmitted: number; rounds: number; calls: number }> {
  const upstream = await startUpstream();
  const upPort = (upstream.address() as AddressInfo).port;
  const bare = await startBarePipe(upPort);
  const exporter = new DiscardExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter, { maxQueueSize: 65536, maxExportBatchSize: 2048, scheduledDelayMillis: 200 })] });
  const fw = await createForkwatchProxy({ upstream: `http://127.0.0.1:${upPort}`, host: '127.0.0.1', port: 0, tracerProvider: provider });
  const fwGuard = await createForkwatchProxy({ upstream: `http://127.0.0.1:${upPort}`, host: '127.0.0.1', port: 0, tracerProvider: provider, guard: true });
  const variants: Array<[string, number]> = [
    ['direct', upPort],
    ['bare pipe proxy', (bare.server.address() as AddressInfo).port],
    ['forkwatch proxy', fw.port],
    ['forkwatch --guard', fwGuard.port],
  ];
  const results = new Map<string, Array<Omit<ProxyVariantResult, 'name'>>>();
  try {
    for (let r = 0; r < ROUNDS; r++) {
      for (const [name, port] of variants) {
        const m = await measure(port).catch((err: unknown) => {
          throw new Error(`${name}: ${String(err)}`);
        });
        results.set(name, [...(results.get(name) ?? []), m]);
      }
    }
  } finally {
    await fw.close();
    await fwGuard.close();
    bare.agent.destroy();
    bare.server.closeAllConnections();
    bare.server.close();
    upstream.closeAllConnections();
    upstream.close();
    await provider.shutdown();
  }
  const med = (xs: number[]): number => pctl(xs, 0.5);
  return {
    variants: variants.map(([name]) => {
      const rs = results.get(name)!;
      return {
        name,
        callP50Ms: med(rs.map((x) => x.callP50Ms)),
        callP99Ms: med(rs.map((x) => x.callP99Ms)),
        eventP50Ms: med(rs.map((x) => x.eventP50Ms)),
        eventP99Ms: med(rs.map((x) => x.eventP99Ms)),
        callsPerSec: med(rs.map((x) => x.callsPerSec)),
        cpuUsPerCall: med(rs.map((x) => x.cpuUsPerCall)),
      };
    }),
    spansEmitted: exporter.spans,
    rounds: ROUNDS,
    calls: LATENCY_CALLS + THROUGHPUT_CALLS,
  };
}
