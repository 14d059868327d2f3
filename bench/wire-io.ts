/**
 * Plumbing of the wire benchmark: detector processes, their CPU time, OTLP senders over real
 * sockets (HTTP protobuf, gzip or not, and gRPC), and the Prometheus figures read back.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { credentials, makeGenericClientConstructor, Metadata, type ServiceError } from '@grpc/grpc-js';
import { TRACE_EXPORT_PATH } from '../src/otlp/grpc/otlp-grpc-server.js';

export interface DetectorProc {
  otlpUrl: string;
  httpUrl: string;
  grpc: string;
  pid: number;
  stop(): Promise<void>;
}

/** Starts bench/wire-detector.js (the `serve` assembly) with `args`; resolves once it listens. */
export async function startWireDetector(nodeArgs: string[], args: string[]): Promise<DetectorProc> {
  const entry = fileURLToPath(new URL('./wire-detector.js', import.meta.url));
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, entry, '--host', '127.0.0.1', '--otlp-port', '0', '--otlp-grpc-port', '0', '--http-port', '0', '--log-level', 'error', ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    const rest = process.env.FORKWATCH_BENCH_DETECTOR_STDOUT;
    let found = false;
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      if (found) {
        if (rest) appendFileSync(rest, d);
        return;
      }
      out += d;
      for (let nl = out.indexOf('\n'); nl >= 0; nl = out.indexOf('\n')) {
        const l = out.slice(0, nl);
        out = out.slice(nl + 1);
        if (l.startsWith('{')) {
          found = true;
          if (rest) appendFileSync(rest, out);
          resolve(l);
          return;
        }
        if (rest) appendFileSync(rest, l + '\n');
      }
    });
    child.once('exit', (code) => reject(new Error(`wire detector exited with ${code}`)));
  });
  const a = JSON.parse(line) as { otlpUrl: string; httpUrl: string; grpc: string };
  return {
    ...a,
    pid: child.pid!,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** User + system CPU seconds a process has used so far (Linux /proc; clock ticks of 10 ms). */
export function cpuSeconds(pid: number): number {
  return cpuSecondsOf(`/proc/${pid}/stat`);
}

/** CPU seconds of a process's main (JavaScript) thread, the rest being V8's GC helpers and libuv's pool (Linux /proc). */
export function mainThreadCpuSeconds(pid: number): number {
  return cpuSecondsOf(`/proc/${pid}/task/${pid}/stat`);
}

/** User and system CPU seconds of a process so far, apart (Linux /proc). */
export function userSystemSeconds(pid: number): [number, number] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return [Number(fields[11]) / 100, Number(fields[12]) / 100];
}

/** A process's resident set now and at its peak, MiB (Linux /proc: VmRSS, VmHWM). */
export function residentMiB(pid: number): { now: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { now: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 };
}

function cpuSecondsOf(statPath: string): number {
  const stat = readFileSync(statPath, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Sends one OTLP request body; resolves once it was acknowledged (retrying overload answers). */
export type Sender = (body: Uint8Array) => Promise<void>;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** OTLP/HTTP protobuf; with `gzip`, bodies must already be gzip-compressed. */
export function httpSender(baseUrl: string, gzip: boolean): Sender {
  const headers: Record<string, string> = { 'content-type': 'application/x-protobuf' };
  if (gzip) headers['content-encoding'] = 'gzip';
  return async (body) => {
    for (;;) {
      const res = await fetch(`${baseUrl}/v1/traces`, { method: 'POST', body, headers });
      await res.arrayBuffer();
      if (res.status === 200) return;
      if (res.status !== 503 && res.status !== 429) throw new Error(`HTTP ${res.status}`);
      await sleep(100);
    }
  };
}

const RawTraceClient = makeGenericClientConstructor(
  {
    Export: {
      path: TRACE_EXPORT_PATH,
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

/** OTLP/gRPC `TraceService/Export` on one channel of its own (an exporter). */
export function grpcSender(address: string): { send: Sender; close(): void } {
  const client = new RawTraceClient(address, credentials.createInsecure(), { 'grpc.max_send_message_length': 64 * 1024 * 1024 });
  const exportOnce = (body: Uint8Array): Promise<ServiceError | null> =>
    new Promise((resolve) =>
      (client as unknown as { Export: Function }).Export(Buffer.from(body.buffer, body.byteOffset, body.byteLength), new Metadata(), (err: ServiceError | null) => resolve(err)),
    );
  return {
    send: async (body) => {
      for (;;) {
        const err = await exportOnce(body);
        if (!err) return;
        if (err.code !== 14 && err.code !== 8) throw err;
        await sleep(100);
      }
    },
    close: () => client.close(),
  };
}

/** Sends each exporter's queue through its own sender, one request at a time each, all exporters at once; resolves the seconds taken. */
export async function sendQueues(queues: Uint8Array[][], senders: Sender[]): Promise<number> {
  const t0 = performance.now();
  await Promise.all(
    queues.map(async (q, i) => {
      for (const body of q) await senders[i % senders.length]!(body);
    }),
  );
  return (performance.now() - t0) / 1000;
}

/**
 * Sends bodies open-loop at `batchesPerSec` for `seconds` (cycling through `bodies`), at most
 * `maxInFlight` outstanding; resolves the batches sent.
 */
export async function sendAtRate(bodies: Uint8Array[], send: Sender, batchesPerSec: number, seconds: number, maxInFlight: number): Promise<number> {
  const t0 = performance.now();
  const pending = new Set<Promise<void>>();
  let sent = 0;
  while (performance.now() - t0 < seconds * 1000 && sent < bodies.length) {
    const due = t0 + (sent / batchesPerSec) * 1000;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    if (pending.size >= maxInFlight) await Promise.race(pending);
    const p: Promise<void> = send(bodies[sent++]!).finally(() => pending.delete(p));
    pending.add(p);
  }
  await Promise.all(pending);
  return sent;
}

/** The sum of a counter (all label sets) in a Prometheus text page. */
export function counter(metrics: string, name: string): number {
  let n = 0;
  for (const m of metrics.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))) n += Number(m[1]);
  return n;
}

/** Cumulative bucket counts of a histogram, summed over label sets, by `le`. */
export function histogram(metrics: string, name: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const m of metrics.matchAll(new RegExp(`^${name}_bucket\\{[^}]*le="([^"]+)"[^}]*\\} (\\S+)$`, 'gm'))) {
    const le = m[1] === '+Inf' ? Infinity : Number(m[1]);
    out.set(le, (out.get(le) ?? 0) + Number(m[2]));
  }
  return out;
}

/** Quantile `q` of the observations between two scrapes of a histogram, interpolated in its bucket. */
export function quantileBetween(before: Map<number, number>, after: Map<number, number>, q: number): { value: number; count: number } {
  const les = [...after.keys()].sort((a, b) => a - b);
  const counts = les.map((le) => (after.get(le) ?? 0) - (before.get(le) ?? 0));
  const total = counts[counts.length - 1] ?? 0;
  if (total === 0) return { value: NaN, count: 0 };
  const rank = q * total;
  for (let i = 0; i < les.length; i++) {
    if (counts[i]! >= rank) {
      const lo = i === 0 ? 0 : les[i - 1]!;
      const hi = les[i]!;
      if (!Number.isFinite(hi)) return { value: lo, count: total };
      const below = i === 0 ? 0 : counts[i - 1]!;
      return { value: lo + ((hi - lo) * (rank - below)) / Math.max(1, counts[i]! - below), count: total };
    }
  }
  return { value: NaN, count: total };
}

export async function scrape(httpUrl: string): Promise<string> {
  return (await fetch(`${httpUrl}/metrics`)).text();
}
