/**
 * `npm run bench -- wire`: detector ingest over real sockets. Batches as the SDK's
 * BatchSpanProcessor sends them (bench/wire-payloads.ts: one process per exporter, 512 spans per
 * request in end order, the SDK's serializer, resource and scopes repeated per request, spans of
 * one HTTP exchange sharing a trace id) go from several concurrent exporters, each sending its
 * own batches one at a time, to a detector process over OTLP/HTTP protobuf (plain and gzip) and
 * OTLP/gRPC, with 20 % and 100 % forkwatch spans. Measured: spans/s,
 * forkwatch spans/s, the detector's CPU per span (from /proc), and its spans per CPU-second as a
 * ratio to the bare decode of the same payloads measured in the same run; then detection lag p50
 * and p99 at 50 % and 80 % of the measured maximum; then through the Collector gateway
 * (collector/otel/gateway.yaml) with 1 and 2 replicas, and which process spent the CPU.
 *
 * FORKWATCH_BENCH_WIRE=requests,max,stages,lag,gateway runs only those parts (default all;
 * `requests`: the detector's CPU per empty request, the transport's floor without decode or commit;
 * FORKWATCH_BENCH_WIRE_REQUESTS=N measures N empty requests after N to warm up, default 2000: at
 * 2,000 the JIT is still compiling the path, at 20,000 it is near its steady state;
 * FORKWATCH_BENCH_WIRE_WARM=N: spans sent to each detector of `max` before its measured passes, in
 * whole passes of the payload set, at least one; default 1,000,000 (8 passes at 20 %, 37 at 100 %):
 * after one pass V8 was still compiling the detector's code on its background threads, 15-19 % of
 * the measured CPU by `perf`, which a detector running for days pays once;
 * FORKWATCH_BENCH_WIRE_MEASURE=N: spans of the measured passes, whole passes, at least two; default
 * 250,000 (2 passes at 20 %, 10 at 100 %): a detector holding a million spans' sessions spends about
 * a CPU-second in one major GC on V8's helper threads, and a 2-pass window at 100 % either caught
 * one (28 µs per span, 46 % on the main thread) or not (9 µs));
 * FORKWATCH_BENCH_CPU_PROF=DIR starts each detector with `node --cpu-prof --cpu-prof-dir DIR`;
 * FORKWATCH_BENCH_DETECTOR_NODE_ARGS (space-separated) adds node flags to each detector's command,
 * e.g. `--single-threaded-gc` to weigh V8's GC threads against the main thread's work;
 * FORKWATCH_BENCH_DETECTOR_STDOUT=FILE appends what the detectors print besides their address line
 * (`--trace-gc`, `--trace-opt` through the variable above; V8 starts each such line with the pid) to FILE.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { decodeProtobuf } from '../src/otlp/decode-protobuf.js';
import { otelcolBinary, startGateway } from '../test/e2e/helpers/otelcol.js';
import { counter, cpuSeconds, grpcSender, mainThreadCpuSeconds, residentMiB, userSystemSeconds, histogram, httpSender, quantileBetween, scrape, sendAtRate, sendQueues, startWireDetector, type DetectorProc, type Sender } from './wire-io.js';
import { loadWirePayloads, type WirePayloads } from './wire-payloads.js';
import { stageCpu } from './wire-stages.js';

const EXPORTERS = 4;
// window + 250 ms = 2.5 s, a bucket bound of forkwatch_detection_lag_seconds: the share of
// findings within the goal (lag p99 <= window + 250 ms) is then read off the histogram exactly.
const WINDOW_MS = 2250;
const KEY = Buffer.from('forkwatch.session.key');

/**
 * A copy of the payloads whose session keys are all new (pass `n` written into the first four
 * hex digits of each `forkwatch.session.key` value), so a second pass opens new sessions instead
 * of replaying decided ones: KeyValue{key, value: AnyValue{string_value (32 hex)}}.
 */
export function rekey(queues: Uint8Array[][], n: number): Uint8Array[][] {
  return queues.map((q) => rekeyBodies(q, n));
}

// Where each body's session key values start, found once per body: searching every copy cost
// about 2,000 instructions per span, which the instruction bench counted as the detector's.
const KEY_VALUES = new WeakMap<Uint8Array, number[]>();

function keyValueOffsets(b: Uint8Array): number[] {
  let at = KEY_VALUES.get(b);
  if (at !== undefined) return at;
  at = [];
  const c = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  for (let i = c.indexOf(KEY); i >= 0; i = c.indexOf(KEY, i + KEY.length)) {
    const v = i + KEY.length;
    if (c[v] === 0x12 && c[v + 1] === 0x22 && c[v + 2] === 0x0a && c[v + 3] === 0x20) at.push(v + 4);
  }
  KEY_VALUES.set(b, at);
  return at;
}

/**
 * Writes pass `n` into the session keys of `bodies` in place (as {@link rekey}, without copying):
 * for the instruction bench, where a copy of every body per pass (and every pass's copies held
 * from the start) was counted as the detector's, as was a native `Buffer.write` call per key.
 */
export function rekeyInPlace(bodies: readonly Uint8Array[], n: number): void {
  const tag = n.toString(16).padStart(4, '0').slice(-4);
  const t0 = tag.charCodeAt(0);
  const t1 = tag.charCodeAt(1);
  const t2 = tag.charCodeAt(2);
  const t3 = tag.charCodeAt(3);
  for (const b of bodies) {
    for (const v of keyValueOffsets(b)) {
      b[v] = t0;
      b[v + 1] = t1;
      b[v + 2] = t2;
      b[v + 3] = t3;
    }
  }
}

function rekeyBodies(bodies: Uint8Array[], n: number): Uint8Array[] {
  const tag = n.toString(16).padStart(4, '0').slice(-4);
  return bodies.map((b) => {
    const c = Buffer.from(b);
    for (const v of keyValueOffsets(b)) c.write(tag, v, 'latin1');
    return c;
  });
}

/** Bare decode of the same payloads in spans per CPU-second of this process (CPU, not wall: the machine is shared). */
function bareDecodeRate(bodies: Uint8Array[], spans: number): number {
  const times: number[] = [];
  for (let r = 0; r < 5; r++) {
    const c0 = process.cpuUsage();
    for (const b of bodies) decodeProtobuf(b);
    const c = process.cpuUsage(c0);
    times.push((c.user + c.system) / 1e6);
  }
  times.sort((a, b) => a - b);
  return spans / times[2]!;
}

interface Transport {
  name: string;
  senders(d: DetectorProc): { senders: Sender[]; close(): void };
  gzip: boolean;
}

const TRANSPORTS: Transport[] = [
  { name: 'http protobuf', gzip: false, senders: (d) => ({ senders: Array.from({ length: EXPORTERS }, () => httpSender(d.otlpUrl, false)), close: () => undefined }) },
  { name: 'http protobuf+gzip', gzip: true, senders: (d) => ({ senders: Array.from({ length: EXPORTERS }, () => httpSender(d.otlpUrl, true)), close: () => undefined }) },
  {
    name: 'grpc',
    gzip: false,
    senders: (d) => {
      const g = Array.from({ length: EXPORTERS }, () => grpcSender(d.grpc));
      return { senders: g.map((x) => x.send), close: () => g.forEach((x) => x.close()) };
    },
  },
];

const fmt = (n: number): string => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');

/** The exporters' queues as one list, taking a request from each in turn (the order they would arrive in). */
export function interleave(queues: Uint8Array[][]): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; out.length < queues.reduce((n, q) => n + q.length, 0); i++) for (const q of queues) if (i < q.length) out.push(q[i]!);
  return out;
}

const WARM_SPANS = Math.max(0, Math.trunc(Number(process.env.FORKWATCH_BENCH_WIRE_WARM ?? 1_000_000)) || 0);
const MEASURE_SPANS = Math.max(0, Math.trunc(Number(process.env.FORKWATCH_BENCH_WIRE_MEASURE ?? 250_000)) || 0);

/** Whole passes of a payload set of `spans` spans that send at least `target` spans, and at least `least` passes. */
function passesFor(target: number, spans: number, least: number): number {
  return Math.max(least, Math.ceil(target / spans));
}
const warmPasses = (spans: number): number => passesFor(WARM_SPANS, spans, 1);
const measuredPasses = (spans: number): number => passesFor(MEASURE_SPANS, spans, 2);
const PARTS = new Set((process.env.FORKWATCH_BENCH_WIRE ?? 'requests,max,stages,lag,gateway').split(','));

async function detector(dir: string, name: string): Promise<DetectorProc> {
  const prof = process.env.FORKWATCH_BENCH_CPU_PROF;
  const extra = (process.env.FORKWATCH_BENCH_DETECTOR_NODE_ARGS ?? '').split(' ').filter(Boolean);
  return startWireDetector([...extra, ...(prof ? ['--cpu-prof', '--cpu-prof-dir', prof] : [])], ['--db', join(dir, `${name}.db`), '--decision-window-ms', String(WINDOW_MS), '--tick-interval-ms', '100']);
}

/** Runs the wire benchmark and prints its lines. */
export async function benchWire(print: (line: string) => void): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'forkwatch-wire-'));
  let pass = 0;
  try {
    const sets: Array<[string, WirePayloads]> = [
      ['20%', loadWirePayloads(1000, 0.2, EXPORTERS)],
      ['100%', loadWirePayloads(1000, 1, EXPORTERS)],
    ];
    print(`# ${EXPORTERS} concurrent exporters (${EXPORTERS / 2} MCP server and ${EXPORTERS / 2} client processes), each sending its own requests one at a time; payload sets: ${sets.map(([n, p]) => `${n} forkwatch = ${p.batches} requests, ${fmt(p.spans)} spans`).join('; ')}`);
    if (PARTS.has('max')) print(`# max: each detector gets ${sets.map(([n, p]) => `${warmPasses(p.spans)} warm-up passes at ${n}`).join(', ')} (FORKWATCH_BENCH_WIRE_WARM=${WARM_SPANS} spans), then ${sets.map(([n, p]) => `${measuredPasses(p.spans)} measured at ${n}`).join(', ')} (FORKWATCH_BENCH_WIRE_MEASURE=${MEASURE_SPANS})`);
    print('# ratio = detector spans per CPU-second / bare decode spans per CPU-second of the same payloads (this run)');
    if (PARTS.has('requests')) {
      const n = Math.max(EXPORTERS, Math.round(Number(process.env.FORKWATCH_BENCH_WIRE_REQUESTS ?? 2000) / EXPORTERS) * EXPORTERS);
      for (const t of TRANSPORTS.filter((x) => !x.gzip)) {
        const d = await detector(dir, `requests-${t.name.replace(/\W/g, '')}`);
        const { senders, close } = t.senders(d);
        try {
          // An empty body is a valid ExportTraceServiceRequest: answered 200 without reaching the sink.
          const queues = (): Uint8Array[][] => Array.from({ length: EXPORTERS }, () => Array.from({ length: n / EXPORTERS }, () => new Uint8Array(0)));
          await sendQueues(queues(), senders);
          const [u0, s0] = userSystemSeconds(d.pid);
          const m0 = mainThreadCpuSeconds(d.pid);
          await sendQueues(queues(), senders);
          const [u1, s1] = userSystemSeconds(d.pid);
          const m1 = mainThreadCpuSeconds(d.pid);
          const us = (x: number): string => ((x / n) * 1e6).toFixed(0);
          print(`  empty requests, ${t.name.padEnd(13)} detector ${us(u1 - u0 + s1 - s0)} µs CPU/request (user ${us(u1 - u0)}, system ${us(s1 - s0)}; main thread ${us(m1 - m0)}) over ${n} requests = ${((u1 - u0 + s1 - s0) / n / 512 * 1e6).toFixed(2)} µs per span of a 512-span request`);
        } finally {
          close();
          await d.stop();
        }
      }
    }
    const maxRate = new Map<string, number>();
    for (const [label, p] of PARTS.has('max') || PARTS.has('lag') || PARTS.has('stages') ? sets : []) {
      const bare = bareDecodeRate(p.byExporter.flat(), p.spans);
      print(`  ${label} forkwatch: bare decode ${fmt(bare)} spans/CPU-s`);
      if (PARTS.has('stages')) {
        // A warm-up pass, then two measured ones, as below; in this process, without sockets.
        stageCpu([interleave(rekey(p.byExporter, ++pass))], EXPORTERS, WINDOW_MS);
        const c = stageCpu([interleave(rekey(p.byExporter, ++pass)), interleave(rekey(p.byExporter, ++pass))], EXPORTERS, WINDOW_MS);
        // The same passes with every touched session rewritten whole (before schema 3), for the ratio.
        const w = stageCpu([interleave(rekey(p.byExporter, ++pass)), interleave(rekey(p.byExporter, ++pass))], EXPORTERS, WINDOW_MS, true);
        const us = (x: number): string => ((x / (p.spans * 2)) * 1e6).toFixed(2);
        const sum = c.decode + c.ingest + c.encode + c.commit + c.tick;
        print(
          `  ${label.padEnd(4)} stages in-process, CPU µs/span: decode ${us(c.decode)}, engine ingest ${us(c.ingest)}, state encode ${us(c.encode)}, SQLite commit ${us(c.commit)}, tick ${us(c.tick)} = ${us(sum)} (${fmt((p.spans * 2) / sum)} spans/CPU-s, ${fmt((p.forkwatchSpans * 2) / sum)} forkwatch spans/CPU-s); whole states instead of deltas: encode ${us(w.encode)}, SQLite ${us(w.commit)}`,
        );
      }
      for (const t of PARTS.has('max') || PARTS.has('lag') ? TRANSPORTS : []) {
        const d = await detector(dir, `max-${label}-${t.name.replace(/\W/g, '')}`);
        const { senders, close } = t.senders(d);
        // What the process holds before any span: the baseline of the memory per span printed below.
        const rssAtStart = residentMiB(d.pid).now;
        try {
          // Warm-up passes, then the measured passes, each of fresh sessions.
          const prep = (n: number): Uint8Array[][] => rekey(p.byExporter, n).map((q) => q.map((b) => (t.gzip ? gzipSync(b) : b)));
          for (let w = warmPasses(p.spans); w > 0; w--) await sendQueues(prep(++pass), senders);
          const measured = measuredPasses(p.spans);
          const passes = Array.from({ length: measured }, () => prep(++pass));
          const bodies = passes[0]!.map((_, i) => passes.flatMap((q) => q[i]!));
          const cpu0 = cpuSeconds(d.pid);
          const main0 = mainThreadCpuSeconds(d.pid);
          const secs = await sendQueues(bodies, senders);
          const cpu = cpuSeconds(d.pid) - cpu0;
          const main = mainThreadCpuSeconds(d.pid) - main0;
          const spans = p.spans * measured;
          const forkwatchSpans = p.forkwatchSpans * measured;
          const ratio = spans / cpu / bare;
          const rss = residentMiB(d.pid);
          const sent = p.forkwatchSpans * (warmPasses(p.spans) + measured);
          maxRate.set(`${label} ${t.name}`, spans / secs);
          print(
            `  ${label.padEnd(4)} ${t.name.padEnd(18)} ${fmt(spans / secs).padStart(9)} spans/s = ${fmt(forkwatchSpans / secs).padStart(8)} forkwatch spans/s | detector ${((cpu / spans) * 1e6).toFixed(2)} µs CPU/span, ${fmt(spans / cpu)} spans/CPU-s = ${fmt(forkwatchSpans / cpu)} forkwatch spans/CPU-s (main thread ${((main / cpu) * 100).toFixed(0)} %) | ratio ${ratio.toFixed(2)} | RSS ${rss.now.toFixed(0)} MiB (peak ${rss.peak.toFixed(0)}, ${rssAtStart.toFixed(0)} at start) after ${fmt(sent)} forkwatch spans = ${fmt(((rss.now - rssAtStart) * 1024 * 1024) / sent)} B each`,
          );
        } finally {
          close();
          await d.stop();
        }
      }
    }

    print(`# detection lag (decision window ${WINDOW_MS} ms, tick 100 ms), open loop for 6 s at 50 % and 80 % of the measured maximum, 20 % forkwatch`);
    const p20 = sets[0]![1];
    const perBatch = p20.spans / p20.batches;
    for (const t of PARTS.has('lag') ? TRANSPORTS.filter((x) => !x.gzip) : []) {
      const max = maxRate.get(`20% ${t.name}`)!;
      for (const share of [0.5, 0.8]) {
        const d = await detector(dir, `lag-${t.name.replace(/\W/g, '')}-${share}`);
        const { senders, close } = t.senders(d);
        try {
          const before = histogram(await scrape(d.httpUrl), 'forkwatch_detection_lag_seconds');
          const bodies = [...interleave(rekey(p20.byExporter, ++pass)), ...interleave(rekey(p20.byExporter, ++pass)), ...interleave(rekey(p20.byExporter, ++pass))];
          const batchesPerSec = (max * share) / perBatch;
          const t0 = performance.now();
          const sent = await sendAtRate(bodies, senders[0]!, batchesPerSec, 6, EXPORTERS * 2);
          const secs = (performance.now() - t0) / 1000;
          await new Promise((r) => setTimeout(r, WINDOW_MS + 2000));
          const after = histogram(await scrape(d.httpUrl), 'forkwatch_detection_lag_seconds');
          const p50 = quantileBetween(before, after, 0.5);
          const p99 = quantileBetween(before, after, 0.99);
          const goal = WINDOW_MS / 1000 + 0.25;
          const within = ((after.get(goal) ?? 0) - (before.get(goal) ?? 0)) / Math.max(1, p50.count);
          print(
            `  ${t.name.padEnd(13)} at ${String(share * 100).padStart(2)} % (${fmt((sent * perBatch) / secs)} spans/s offered): lag p50 ${(p50.value * 1000).toFixed(0)} ms, p99 ${(p99.value * 1000).toFixed(0)} ms (interpolated in the histogram's buckets) over ${p50.count} findings; ${(within * 100).toFixed(1)} % within window + 250 ms`,
          );
        } finally {
          close();
          await d.stop();
        }
      }
    }

    if (!PARTS.has('gateway')) return;
    if (!otelcolBinary()) {
      print('# gateway: skipped (the Collector is not built: collector/otelcol/build.sh)');
      return;
    }
    print(`# through the Collector gateway (collector/otel/gateway.yaml, load_balancing over OTLP/gRPC), OTLP/HTTP protobuf in, 20 % forkwatch`);
    for (const replicas of [1, 2]) {
      const ds: DetectorProc[] = [];
      for (let i = 0; i < replicas; i++) ds.push(await detector(dir, `gw${replicas}-${i}`));
      const gw = await startGateway({ detectors: ds.map((d) => d.grpc) });
      try {
        const senders = Array.from({ length: EXPORTERS }, () => httpSender(gw.otlpHttpUrl, false));
        const received = async (): Promise<number> => {
          let n = 0;
          for (const d of ds) n += counter(await scrape(d.httpUrl), 'forkwatch_spans_received_total');
          return n;
        };
        const cpu = (): number[] => [cpuSeconds(gw.child.pid!), ...ds.map((d) => cpuSeconds(d.pid))];
        const a = rekey(p20.byExporter, ++pass);
        const b = rekey(p20.byExporter, ++pass);
        const bodies = a.map((q, i) => [...q, ...b[i]!]);
        const want = (await received()) + p20.forkwatchSpans * 2;
        const c0 = cpu();
        const t0 = performance.now();
        await sendQueues(bodies, senders);
        const deadline = Date.now() + 120_000;
        while ((await received()) < want && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        const secs = (performance.now() - t0) / 1000;
        const c1 = cpu();
        const got = (await received()) - (want - p20.forkwatchSpans * 2);
        const spans = p20.spans * 2;
        const used = c1.map((c, i) => c - c0[i]!);
        print(
          `  ${replicas} replica${replicas > 1 ? 's' : ' '} ${fmt(spans / secs).padStart(9)} spans/s = ${fmt(got / secs).padStart(8)} forkwatch spans/s reaching the detectors (${fmt(got)}/${fmt(p20.forkwatchSpans * 2)}) | CPU µs/span: gateway ${((used[0]! / spans) * 1e6).toFixed(2)}, detectors ${used
            .slice(1)
            .map((u) => ((u / spans) * 1e6).toFixed(2))
            .join(' + ')}`,
        );
      } finally {
        await gw.stop();
        for (const d of ds) await d.stop();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
