/**
 * Overload: 50 clients send ~4 MiB protobuf batches (over OTLP/HTTP or OTLP/gRPC) as fast as they are answered (100 ms pause
 * after a 429/503) to a real `forkwatch serve` child process with default limits, while /healthz
 * and /readyz are polled. Reports the child's RSS peak, probe latencies, the status histogram, the
 * slowest OTLP answer, and how long ingest takes to answer 200 again once the load stops.
 * Bounded: LOAD_MS of load, then at most RECOVERY_MS of observation.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { credentials, makeGenericClientConstructor, Metadata, type Client, type ServiceError } from '@grpc/grpc-js';
import { loadIngestPayloads } from './ingest-payloads.js';
import type { ProberInput, ProberOutput } from './overload-prober.js';

/** Which OTLP port the load goes to. */
export type OverloadTransport = 'http' | 'grpc';

const CLIENTS = 50;
/** Load duration, ms; BENCH_OVERLOAD_MS overrides it (for a quick look, not for figures). */
const LOAD_MS = Number(process.env.BENCH_OVERLOAD_MS) || 40_000;
const RECOVERY_MS = 30_000;
const BODY_BYTES = 4 * 1024 * 1024 - 64 * 1024; // under the default maxBodyBytes (4 MiB)
const PROBE_EVERY_MS = 100;
/** The default sinkTimeoutMs (10 s) + 1 s: every OTLP request should be answered within it. */
const ANSWER_BOUND_MS = 11_000;
const CLI = fileURLToPath(new URL('../../dist/cli/bin.js', import.meta.url));

export interface OverloadResult {
  transport: OverloadTransport;
  clients: number;
  bodyBytes: number;
  loadMs: number;
  rssPeakBytes: number;
  rssAfterLoadBytes: number;
  rssAfterRecoveryBytes: number;
  /** RSS at the end of each quarter of the load: a plateau shows as the last quarters level. */
  rssQuartersBytes: number[];
  /** Highest RSS in the first and in the second half of the load. */
  rssFirstHalfMaxBytes: number;
  rssSecondHalfMaxBytes: number;
  /** Highest RSS in the middle and in the last third of the load: a plateau shows as the last not above the middle. */
  rssMiddleThirdMaxBytes: number;
  rssLastThirdMaxBytes: number;
  /** The detector's V8 heap used and external memory (its /metrics), highest seen during the load. */
  heapUsedMaxBytes: number;
  externalMaxBytes: number;
  healthz: Percentiles;
  readyz: Percentiles;
  probeTimeouts: number;
  statuses: Record<string, number>;
  /** Slowest answer of each status, ms. */
  slowestBy: Record<string, number>;
  otlpSlowestMs: number;
  otlpOverBound: number;
  recoveryMs: number | undefined;
}

export interface Percentiles {
  p50: number;
  p99: number;
  max: number;
  n: number;
}

interface Answer {
  status: number;
  ms: number;
}

function post(agent: Agent, url: URL, body: Buffer, timeoutMs: number): Promise<Answer> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/x-protobuf', 'content-length': body.length }, timeout: timeoutMs },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t0 }));
        res.on('error', () => resolve({ status: -1, ms: performance.now() - t0 }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    // A refusal before the body is read closes the connection: EPIPE/ECONNRESET after a status is fine.
    req.on('error', () => resolve({ status: -1, ms: performance.now() - t0 }));
    req.end(body);
  });
}

function get(url: string, timeoutMs: number): Promise<Answer> {
  const t0 = performance.now();
  return fetch(url, { signal: AbortSignal.timeout(timeoutMs) }).then(
    async (r) => {
      await r.arrayBuffer();
      return { status: r.status, ms: performance.now() - t0 };
    },
    () => ({ status: -1, ms: performance.now() - t0 }),
  );
}

function percentiles(xs: number[]): Percentiles {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number): number => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
  return { p50: at(0.5), p99: at(0.99), max: s[s.length - 1] ?? NaN, n: s.length };
}

function rssOf(pid: number): { rss: number; hwm: number } {
  const txt = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string): number => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(txt)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

/** ~4 MiB bodies: concatenated ExportTraceServiceRequests are one request (repeated fields merge). */
function makeBodies(): { big: Buffer[]; small: Buffer } {
  const p = loadIngestPayloads(3000, 0.2);
  const big: Buffer[] = [];
  let parts: Uint8Array[] = [];
  let size = 0;
  for (let round = 0; big.length < 8 && round < 50; round++) {
    for (const b of p.protobuf) {
      if (size + b.byteLength > BODY_BYTES) {
        big.push(Buffer.concat(parts));
        parts = [];
        size = 0;
        if (big.length >= 8) break;
      }
      parts.push(b);
      size += b.byteLength;
    }
  }
  return { big, small: Buffer.from(p.protobuf[0]!) };
}

const GrpcExportClient = makeGenericClientConstructor(
  {
    Export: {
      path: '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
      requestStream: false,
      responseStream: false,
      requestSerialize: (b: Buffer) => b,
      requestDeserialize: (b: Buffer) => b,
      responseSerialize: (b: Buffer) => b,
      responseDeserialize: (b: Buffer) => b,
    },
  },
  'TraceService',
);

function grpcExport(client: Client, body: Buffer, timeoutMs: number): Promise<Answer> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    (client as unknown as { Export: Function }).Export(body, new Metadata(), { deadline: Date.now() + timeoutMs }, (err: ServiceError | null) =>
      // OK counted as 200 so the histograms of both transports read alike; other statuses by gRPC code.
      resolve({ status: err === null ? 200 : 1000 + err.code, ms: performance.now() - t0 }),
    );
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function benchOverload(transport: OverloadTransport = 'http'): Promise<OverloadResult> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
  const { big, small } = makeBodies();
  const dir = mkdtempSync(join(tmpdir(), 'forkwatch-overload-'));
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('FORKWATCH_')) delete env[k];
  delete env.NODE_OPTIONS;
  // BENCH_OVERLOAD_NODE_ARGS: extra node flags for the detector (e.g. --trace-gc), for looking into a run.
  const nodeArgs = (process.env.BENCH_OVERLOAD_NODE_ARGS ?? '').split(' ').filter(Boolean);
  // BENCH_OVERLOAD_FLAGS: extra `serve` flags (e.g. --max-in-flight-bytes 16777216), to measure the memory bound's terms.
  const serveFlags = (process.env.BENCH_OVERLOAD_FLAGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, CLI, 'serve', '--host', '127.0.0.1', '--otlp-port', '0', '--http-port', '0', '--otlp-grpc-port', '0', '--db', join(dir, 'fw.db'), ...serveFlags], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out = (out + d).slice(-200_000)));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (out = (out + d).slice(-200_000)));
  try {
    const urls = await new Promise<{ otlp: string; http: string; grpc: string }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`detector did not start:\n${out}`)), 20_000);
      const poll = setInterval(() => {
        const m = /forkwatch listening otlp=(\S+) http=(\S+) otlp-grpc=(\S+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          clearInterval(poll);
          resolve({ otlp: m[1]!, http: m[2]!, grpc: m[3]! });
        }
      }, 50);
    });
    const otlp = new URL('/v1/traces', urls.otlp);
    const pid = child.pid!;
    let rssPeak = 0;
    const loadStart = performance.now();
    const samples: Array<{ at: number; rss: number }> = [];
    const rssTimer = setInterval(() => {
      const rss = rssOf(pid).rss;
      rssPeak = Math.max(rssPeak, rss);
      if (performance.now() - loadStart <= LOAD_MS) samples.push({ at: performance.now() - loadStart, rss });
    }, 200);

    // Probes from a worker thread: an event loop of their own, not the load clients'.
    const prober = new Worker(new URL('./overload-prober.js', import.meta.url), {
      workerData: { http: urls.http, everyMs: PROBE_EVERY_MS, timeoutMs: 10_000 } satisfies ProberInput,
    });
    const probed = new Promise<ProberOutput>((resolve, reject) => {
      prober.once('message', resolve);
      prober.once('error', reject);
    });
    // The detector's own view of its memory, every 2 s (a scrape is cheap next to the load).
    let heapUsedMax = 0;
    let externalMax = 0;
    const metricTimer = setInterval(() => {
      if (performance.now() - loadStart > LOAD_MS) return;
      void fetch(`${urls.http}/metrics`, { signal: AbortSignal.timeout(5_000) })
        .then((r) => r.text())
        .then((t) => {
          const g = (name: string): number => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(t)?.[1] ?? 0);
          heapUsedMax = Math.max(heapUsedMax, g('nodejs_heap_size_used_bytes'));
          externalMax = Math.max(externalMax, g('nodejs_external_memory_bytes'));
        })
        .catch(() => undefined);
    }, 2_000);

    const statuses: Record<string, number> = {};
    let slowest = 0;
    let overBound = 0;
    const slowestBy: Record<string, number> = {};
    const stopAt = performance.now() + LOAD_MS;
    const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
    // One channel (one HTTP/2 connection) per gRPC client, as 50 exporters would have.
    const grpcClients = transport === 'grpc' ? Array.from({ length: CLIENTS }, () => new GrpcExportClient(urls.grpc, credentials.createInsecure())) : [];
    const send = (i: number, body: Buffer): Promise<Answer> => (transport === 'grpc' ? grpcExport(grpcClients[i]!, body, 60_000) : post(agent, otlp, body, 60_000));
    const client = async (i: number): Promise<void> => {
      for (let n = 0; performance.now() < stopAt; n++) {
        const r = await send(i, big[(i + n) % big.length]!);
        const key = r.status === -1 ? 'no answer' : r.status >= 1000 ? `grpc ${r.status - 1000}` : String(r.status);
        statuses[key] = (statuses[key] ?? 0) + 1;
        slowest = Math.max(slowest, r.ms);
        slowestBy[key] = Math.max(slowestBy[key] ?? 0, r.ms);
        if (r.ms > ANSWER_BOUND_MS || r.status === -1) overBound++;
        if (r.status !== 200) await sleep(100);
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i)));
    agent.destroy();
    for (const c of grpcClients) c.close();
    const rssAfterLoad = rssOf(pid).rss;

    // Recovery: until a small batch is answered 200 and /readyz says ready.
    const t0 = performance.now();
    let recoveryMs: number | undefined;
    const recoveryAgent = new Agent({ keepAlive: false });
    while (performance.now() - t0 < RECOVERY_MS) {
      const [o, r] = await Promise.all([post(recoveryAgent, otlp, small, 10_000), get(`${urls.http}/readyz`, 10_000)]);
      if (o.status === 200 && r.status === 200) {
        recoveryMs = performance.now() - t0;
        break;
      }
      await sleep(100);
    }
    prober.postMessage('stop');
    const lat = await probed;
    await prober.terminate();
    clearInterval(metricTimer);
    await sleep(Math.max(0, 10_000 - (performance.now() - t0)));
    clearInterval(rssTimer);
    const final = rssOf(pid);
    const quarter = (q: number): number => samples.filter((x) => x.at <= (q * LOAD_MS) / 4).at(-1)?.rss ?? NaN;
    const halfMax = (first: boolean): number => Math.max(...samples.filter((x) => (x.at <= LOAD_MS / 2) === first).map((x) => x.rss));
    const thirdMax = (third: number): number =>
      Math.max(...samples.filter((x) => x.at > (third * LOAD_MS) / 3 && x.at <= ((third + 1) * LOAD_MS) / 3).map((x) => x.rss));
    return {
      transport,
      rssQuartersBytes: [1, 2, 3, 4].map(quarter),
      rssFirstHalfMaxBytes: halfMax(true),
      rssSecondHalfMaxBytes: halfMax(false),
      rssMiddleThirdMaxBytes: thirdMax(1),
      rssLastThirdMaxBytes: thirdMax(2),
      heapUsedMaxBytes: heapUsedMax,
      externalMaxBytes: externalMax,
      clients: CLIENTS,
      bodyBytes: big[0]!.length,
      loadMs: LOAD_MS,
      rssPeakBytes: Math.max(rssPeak, final.hwm),
      rssAfterLoadBytes: rssAfterLoad,
      rssAfterRecoveryBytes: final.rss,
      healthz: percentiles(lat.healthz),
      readyz: percentiles(lat.readyz),
      probeTimeouts: lat.timeouts,
      statuses,
      slowestBy,
      otlpSlowestMs: slowest,
      otlpOverBound: overBound,
      recoveryMs,
    };
  } finally {
    // With extra node flags (a --cpu-prof), let the detector exit on its own so that it writes its files.
    if (nodeArgs.length > 0 && child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(20_000)]);
    }
    child.kill('SIGKILL');
    if (process.env.BENCH_OVERLOAD_LOG) process.stderr.write(out.split('\n').filter((l) => l.includes(process.env.BENCH_OVERLOAD_LOG!)).join('\n'));
    rmSync(dir, { recursive: true, force: true });
  }
}
