/**
 * Overload: 50 clients post ~4 MiB protobuf batches as fast as they are answered (100 ms pause
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
import { loadIngestPayloads } from './ingest-payloads.js';

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
  clients: number;
  bodyBytes: number;
  loadMs: number;
  rssPeakBytes: number;
  rssAfterLoadBytes: number;
  rssAfterRecoveryBytes: number;
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

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function benchOverload(): Promise<OverloadResult> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
  const { big, small } = makeBodies();
  const dir = mkdtempSync(join(tmpdir(), 'forkwatch-overload-'));
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('FORKWATCH_')) delete env[k];
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, [CLI, 'serve', '--host', '127.0.0.1', '--otlp-port', '0', '--http-port', '0', '--db', join(dir, 'fw.db')], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (out = (out + d).slice(-20_000)));
  try {
    const urls = await new Promise<{ otlp: string; http: string }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`detector did not start:\n${out}`)), 20_000);
      const poll = setInterval(() => {
        const m = /forkwatch listening otlp=(\S+) http=(\S+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          clearInterval(poll);
          resolve({ otlp: m[1]!, http: m[2]! });
        }
      }, 50);
    });
    const otlp = new URL('/v1/traces', urls.otlp);
    const pid = child.pid!;
    let rssPeak = 0;
    const rssTimer = setInterval(() => (rssPeak = Math.max(rssPeak, rssOf(pid).rss)), 200);

    const lat = { healthz: [] as number[], readyz: [] as number[] };
    let probeTimeouts = 0;
    let probing = true;
    const prober = async (path: 'healthz' | 'readyz'): Promise<void> => {
      while (probing) {
        const r = await get(`${urls.http}/${path}`, 10_000);
        if (r.status === -1) probeTimeouts++;
        lat[path].push(r.ms);
        await sleep(PROBE_EVERY_MS);
      }
    };
    const probes = [prober('healthz'), prober('readyz')];

    const statuses: Record<string, number> = {};
    let slowest = 0;
    let overBound = 0;
    const slowestBy: Record<string, number> = {};
    const stopAt = performance.now() + LOAD_MS;
    const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
    const client = async (i: number): Promise<void> => {
      for (let n = 0; performance.now() < stopAt; n++) {
        const r = await post(agent, otlp, big[(i + n) % big.length]!, 60_000);
        const key = r.status === -1 ? 'no answer' : String(r.status);
        statuses[key] = (statuses[key] ?? 0) + 1;
        slowest = Math.max(slowest, r.ms);
        slowestBy[key] = Math.max(slowestBy[key] ?? 0, r.ms);
        if (r.ms > ANSWER_BOUND_MS || r.status === -1) overBound++;
        if (r.status !== 200) await sleep(100);
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i)));
    agent.destroy();
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
    probing = false;
    await Promise.all(probes);
    await sleep(Math.max(0, 10_000 - (performance.now() - t0)));
    clearInterval(rssTimer);
    const final = rssOf(pid);
    return {
      clients: CLIENTS,
      bodyBytes: big[0]!.length,
      loadMs: LOAD_MS,
      rssPeakBytes: Math.max(rssPeak, final.hwm),
      rssAfterLoadBytes: rssAfterLoad,
      rssAfterRecoveryBytes: final.rss,
      healthz: percentiles(lat.healthz),
      readyz: percentiles(lat.readyz),
      probeTimeouts,
      statuses,
      slowestBy,
      otlpSlowestMs: slowest,
      otlpOverBound: overBound,
      recoveryMs,
    };
  } finally {
    child.kill('SIGKILL');
    if (process.env.BENCH_OVERLOAD_LOG) process.stderr.write(out.split('\n').filter((l) => l.startsWith('SLOW')).join('\n'));
    rmSync(dir, { recursive: true, force: true });
  }
}
