/**
 * `npm run bench`: every benchmark in one run, figures and ratios measured side by side.
 * Absolute numbers drift with the machine's load; the ratios are what to compare.
 */
import { benchDecode } from './decode.js';
import { benchEngine } from './engine.js';
import { benchIngest } from './ingest.js';
import { benchInstructionCount, instructionRunLengths, summarizeInstructionRows, type CountedSides } from './instruction-count.js';
import { scaledDelays } from './valgrind-delays.js';
import { benchInstrumentation, type Spread } from './instrumentation.js';
import { benchWire } from './wire.js';
import { benchWireInstructions } from './wire-instructions.js';
import { benchStateWrite } from './state-write.js';
import { printProxy } from './proxy.js';
import { printSidecar } from './sidecar.js';
import { printSidecarInstructions } from './sidecar-instructions.js';
import { printSidecarProfile } from './sidecar-profile.js';
import { printProxyEvents } from './proxy-events.js';
import { benchPromisesPerCall } from './promises-per-call.js';
import { benchGcPerCall, describeGcFigures, summarizeGcRows } from './gc-per-call.js';
import { printProxyInstructions } from './proxy-instructions.js';
import { benchOverload } from './overload.js';
import { printSessions } from './sessions.js';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;

async function main(): Promise<void> {
  const only = process.argv.slice(2);
  const want = (name: string): boolean => only.length === 0 || only.includes(name);
  console.log(`forkwatch benchmarks — node ${process.version}, ${new Date().toISOString()}`);

  if (want('instrumentation')) {
    console.log('\n# Instrumentation overhead: tool calls/s through a real MCP SDK client and server (loopback HTTP),');
    const r = await benchInstrumentation();
    console.log(`# both sides instrumented (default options), BatchSpanProcessor + OTLP/proto exporter; ${r.rounds} interleaved round pairs of ${r.callsPerRound} calls,`);
    console.log('# medians of the paired ratios; [90% bootstrap interval of the median] (interquartile range of the pairs)');
    const sp = (s: Spread): string => `${pct(s.median).padStart(6)} [${pct(s.lo)}, ${pct(s.hi)}] (${pct(s.q1)} – ${pct(s.q3)})`;
    console.log(`  plain           ${fmt(r.plainCallsPerSec).padStart(10)} calls/s   ${fmt(r.plainCpuUsPerCall).padStart(6)} µs CPU/call`);
    console.log(`  instrumented    ${fmt(r.instrumentedCallsPerSec).padStart(10)} calls/s   ${fmt(r.instrumentedCpuUsPerCall).padStart(6)} µs CPU/call`);
    console.log(`  overhead, throughput   ${sp(r.overhead)}   (target < 5%)`);
    console.log(`  overhead, CPU per call ${sp(r.cpuOverhead)}`);
  }

  // Opt-in (minutes under valgrind): the load-independent figure of the same comparison.
  if (only.includes('instructions')) {
    const { warmup, short, long, runs } = instructionRunLengths();
    console.log(`\n# Instrumentation overhead in instructions per tool call (valgrind callgrind, node --predictable --single-threaded; after a ${warmup}-call warm-up, a ${long}-call`);
    console.log(`# minus a ${short}-call window), BatchSpanProcessor + OTLP/proto exporter to a local sink; echo: no event store; progress-store: 5 progress`);
    console.log('# notifications per call, InMemoryEventStore; zero-code: node --import @forkwatch/instrumentation/register (NodeSDK);');
    console.log('# sdk-only: the same NodeSDK, env and exporter without forkwatch (one span exported at start); sdk-explicit: that NodeSDK');
    console.log('# with both sides instrumented explicitly on its global provider. Spans, moments per call at the sink');
    if (runs > 1) console.log(`# ${runs} runs per variant, the variants of an app interleaved run by run`);
    const delays = scaledDelays();
    console.log(
      `# Wall-clock bounds scaled by the slowdown (x${delays.slowdown}, INSTR_SLOWDOWN; bench/valgrind-delays.ts): requestSpanDelayMs ${delays.requestSpanDelayMs / 1000} s, the explicit client's deliveryTimeoutMs ${delays.deliveryTimeoutMs / 1000} s;`,
    );
    console.log('# each row: its slowest counted call and the counted calls that outlived the scaled delay (0: none emitted spans a real run would not)');
    const rows = await benchInstructionCount(undefined, undefined, (r) => {
      const goal = r.app === 'echo' ? '1%' : '3%';
      const over = r.sides === 'none' ? ''.padEnd(38) : `${pct(r.overhead).padStart(7)} over uninstrumented (goal <= ${goal})`;
      const names = Object.entries(r.spansByName)
        .filter(([, n]) => n !== 0)
        .map(([name, n]) => `${name.replace(/^forkwatch\./, '')} ${n.toFixed(3)}`)
        .join(', ');
      console.log(
        `  ${r.app.padEnd(15)} ${r.sides.padEnd(12)}${runs > 1 ? ` #${r.run + 1}` : ''} ${(r.perCall / 1e6).toFixed(3).padStart(8)} M instructions/call ${over} | without V8's compiler/deoptimizer ${(r.perCallNoJit / 1e6).toFixed(3)} M${r.sides === 'none' ? '' : ` (${pct(r.overheadNoJit)})`}, without them and the GC ${(r.perCallNoJitNoGc / 1e6).toFixed(3)} M${r.sides === 'none' ? '' : ` (${pct(r.overheadNoJitNoGc)})`}, GC ${(r.gcPerCall / 1e6).toFixed(3)} M, JIT-compiled JS ${(r.jsPerCall / 1e6).toFixed(3)} M | ${r.spansPerCall.toFixed(3)} spans/call, ${r.momentsPerCall.toFixed(3)} moments/call${names ? ` (${names})` : ''} | slowest counted call ${(r.late.slowestMs / 1000).toFixed(1)} s, ${r.late.pastDelay} of ${r.late.calls} past the delay`,
      );
    });
    if (runs > 1) {
      console.log(`# Median [lowest, highest] of the ${runs} runs per variant; overhead = median / the uninstrumented median - 1; [90 % bootstrap interval of it] (bench/resample.ts)`);
      const m = (x: { median: number; min: number; max: number }): string => `${(x.median / 1e6).toFixed(3)} M [${(x.min / 1e6).toFixed(3)}, ${(x.max / 1e6).toFixed(3)}] (±${pct((x.max - x.min) / 2 / x.median)})`;
      for (const s of summarizeInstructionRows(rows)) {
        const over = (o: number): string => (s.sides === 'none' ? '' : ` ${pct(o)}`);
        const iv = s.overheadNoJitNoGcInterval;
        const interval = iv ? ` [90 % interval ${pct(iv.lo)}, ${pct(iv.hi)}]` : '';
        console.log(`  ${s.app.padEnd(15)} ${s.sides.padEnd(12)} ${m(s.perCall)}${over(s.overhead)} | without compiler and GC ${m(s.perCallNoJitNoGc)}${over(s.overheadNoJitNoGc)}${interval} | JIT-compiled JS ${m(s.jsPerCall)}`);
      }
    }
    // A fleet already running NodeSDK pays sdk-only's part anyway: forkwatch's own is the rest,
    // split into its work under NodeSDK's globals (sdk-explicit) and the patching path's.
    const pairs: Array<[CountedSides, CountedSides, string]> = [
      ['zero-code', 'sdk-only', "forkwatch's own under NodeSDK"],
      ['sdk-explicit', 'sdk-only', "forkwatch's work under NodeSDK's globals"],
      ['zero-code', 'sdk-explicit', 'the patching path alone'],
      ['sdk-only', 'none', "NodeSDK's own"],
    ];
    for (const [over, base, what] of pairs) {
      for (const z of rows.filter((r) => r.sides === over)) {
        const b = rows.find((r) => r.sides === base && r.app === z.app && r.run === z.run);
        if (!b) continue;
        console.log(
          `  ${over} over ${base}${runs > 1 ? ` #${z.run + 1}` : ''} (${what}): ${pct(z.perCall / b.perCall - 1)}, without compiler and GC ${pct(z.perCallNoJitNoGc / b.perCallNoJitNoGc - 1)} (${((z.perCallNoJitNoGc - b.perCallNoJitNoGc) / 1e6).toFixed(3)} M), JIT-compiled JS ${((z.jsPerCall - b.jsPerCall) / 1e6).toFixed(3)} M`,
        );
      }
    }
  }

  // Opt-in (seconds per variant): async resources per call, exact.
  if (only.includes('promises')) {
    console.log(`\n# Async resources created per tool call (async_hooks init counter, ${process.env.PROMISES_N ?? 500} calls after ${process.env.PROMISES_WARMUP ?? 300}; ${process.env.PROMISES_APP ?? 'progress-store'}):`);
    console.log("# under NodeSDK's AsyncLocalStorage context manager each promise pays Node 20's promise hooks");
    const rows = await benchPromisesPerCall((r) => {
      const types = Object.entries(r.perCall)
        .filter(([, v]) => v >= 0.005)
        .map(([k, v]) => `${k} ${v.toFixed(2)}`)
        .join(', ');
      console.log(`  ${r.sides.padEnd(12)} ${types}`);
    });
    const promises = (s: string): number | undefined => rows.find((r) => r.sides === s)?.perCall.PROMISE;
    for (const [a, b] of [['both', 'none'], ['sdk-explicit', 'sdk-only'], ['zero-code', 'sdk-only'], ['zero-code', 'sdk-explicit']] as const) {
      const x = promises(a);
      const y = promises(b);
      if (x !== undefined && y !== undefined) console.log(`  promises per call, ${a} over ${b}: ${(x - y >= 0 ? '+' : '') + (x - y).toFixed(2)}`);
    }
  }

  // Opt-in (a minute per run): the GC's work per call, by V8's own GC trace.
  if (only.includes('gc')) {
    console.log(`\n# GC work per tool call (node --predictable --single-threaded --trace-gc-nvp, whole run: 1,000-call warm-up and ${process.env.GC_CALLS ?? 3000} calls; ${process.env.GC_APP ?? 'progress-store'}), medians of ${process.env.GC_RUNS ?? 2} interleaved runs, over the first variant`);
    const rows = await benchGcPerCall((r) => console.log(`  ${r.sides.padEnd(12)} #${r.run + 1} ${describeGcFigures(r)}`));
    for (const line of summarizeGcRows(rows)) console.log(line);
  }

  // Opt-in (minutes under valgrind): the proxy's cost, load-independent.
  if (only.includes('proxy-instructions')) await printProxyInstructions((line) => console.log(line));

  if (want('instrumentation-store')) {
    console.log('\n# Instrumentation overhead, progress-store app (5 progress notifications per call, InMemoryEventStore), both sides, real OTLP exporter');
    const r = await benchInstrumentation({ app: 'progress-store', rounds: 11, calls: 400 });
    const sp = (s: Spread): string => `${pct(s.median).padStart(6)} [${pct(s.lo)}, ${pct(s.hi)}] (${pct(s.q1)} – ${pct(s.q3)})`;
    console.log(`  plain           ${fmt(r.plainCallsPerSec).padStart(10)} calls/s   ${fmt(r.plainCpuUsPerCall).padStart(6)} µs CPU/call`);
    console.log(`  instrumented    ${fmt(r.instrumentedCallsPerSec).padStart(10)} calls/s   ${fmt(r.instrumentedCpuUsPerCall).padStart(6)} µs CPU/call`);
    console.log(`  overhead, throughput   ${sp(r.overhead)}`);
    console.log(`  overhead, CPU per call ${sp(r.cpuOverhead)}`);
  }

  // Opt-in: it starts servers and proxies of its own.
  if (only.includes('proxy')) await printProxy((line) => console.log(line));
  // Opt-in: the proxy as deployed, its own process's CPU and memory (issue 28's goals).
  if (only.includes('sidecar')) await printSidecar((line) => console.log(line));
  // Opt-in (minutes under valgrind): the same, counted in instructions, where the CPU ratios are too noisy.
  if (only.includes('sidecar-instructions')) await printSidecarInstructions((line) => console.log(line));
  if (only.includes('sidecar-profile')) await printSidecarProfile((line) => console.log(line));
  // Opt-in: the sidecar's per-event work, stage by stage, in process.
  if (only.includes('proxy-events')) await printProxyEvents((line) => console.log(line));

  if (want('decode')) {
    console.log('\n# OTLP decode alone');
    benchDecode();
  }

  if (want('ingest')) {
    console.log('\n# Ingest end to end on one process: decode -> correlate -> SQLite group commit (WAL file),');
    console.log('# 512-span batches, 20% forkwatch spans (3,000 sessions, a seed fork every 50th), vs bare decode of the same payloads');
    for (const r of benchIngest()) {
      console.log(`  ${r.format.padEnd(9)} bare decode ${fmt(r.bareDecodeSpansPerSec).padStart(11)} spans/s | end to end ${fmt(r.endToEndSpansPerSec).padStart(10)} spans/s = ${fmt(r.endToEndForkwatchSpansPerSec).padStart(9)} forkwatch spans/s | ratio ${r.ratio.toFixed(2)} (${r.ratioRange[0].toFixed(2)}–${r.ratioRange[1].toFixed(2)} over ${r.rounds} round pairs) | ${r.findings} findings`);
    }
    console.log('  targets: >= 100,000 forkwatch spans/s end to end; ratio >= 0.50');
  }

  if (want('wire')) {
    console.log('\n# Ingest over the wire: exporters -> detector process over real sockets (HTTP protobuf, gzip, gRPC); then through the gateway');
    await benchWire((line) => console.log(line));
  }

  // Opt-in (minutes under valgrind): npm run bench -- wire-instructions
  if (only.includes('wire-instructions')) {
    console.log('\n# The detector\'s in-process work on the wire payloads (decode, engine, tick, sliced group commits into SQLite), in instructions per span (valgrind, node --predictable --single-threaded)');
    benchWireInstructions((line) => console.log(line));
  }

  // Opt-in (a few minutes: a real `forkwatch serve` per variant): npm run bench -- sessions
  if (only.includes('sessions')) {
    console.log('\n# Healthy sessions per CPU-second of the detector, decisions included, over OTLP/HTTP and OTLP/gRPC (bench/sessions.ts)');
    await printSessions((line) => console.log(line));
  }

  // Opt-in (about three minutes, a child detector at full load over HTTP, then over gRPC): npm run bench -- overload
  if (only.includes('overload')) {
    for (const transport of ['http', 'grpc'] as const) {
      console.log(`\n# Overload over ${transport === 'http' ? 'OTLP/HTTP' : 'OTLP/gRPC'}: 50 clients sending ~4 MiB protobuf batches to a real \`forkwatch serve\` (default limits${process.env.BENCH_OVERLOAD_FLAGS ? ` and ${process.env.BENCH_OVERLOAD_FLAGS}` : ''}), probes polled every 100 ms from a worker thread`);
      const r = await benchOverload(transport);
      const mib = (b: number): string => `${(b / 1024 ** 2).toFixed(0)} MiB`;
      const ms = (x: number): string => `${Math.round(x).toLocaleString('en-US')} ms`;
      console.log(`  load            ${r.clients} clients x ${mib(r.bodyBytes)} bodies for ${ms(r.loadMs)}`);
      console.log(`  RSS             peak ${mib(r.rssPeakBytes)} | end of load ${mib(r.rssAfterLoadBytes)} | 10 s after ${mib(r.rssAfterRecoveryBytes)}   (goal: peak <= 1 GiB container)`);
      console.log(`  RSS plateau     at each quarter of the load ${r.rssQuartersBytes.map(mib).join(' / ')}; max first half ${mib(r.rssFirstHalfMaxBytes)}, second half ${mib(r.rssSecondHalfMaxBytes)}`);
      const rising = r.rssLastThirdMaxBytes > r.rssMiddleThirdMaxBytes * 1.05;
      console.log(`  RSS plateau     max middle third ${mib(r.rssMiddleThirdMaxBytes)}, last third ${mib(r.rssLastThirdMaxBytes)}: ${rising ? 'still rising (> +5 %)' : 'levelled off'}   (bound: docs/configuration.md#memory-under-overload)`);
      console.log(`  heap            detector's V8 heap used max ${mib(r.heapUsedMaxBytes)}, external max ${mib(r.externalMaxBytes)}`);
      console.log(`  /healthz        p50 ${ms(r.healthz.p50)} p99 ${ms(r.healthz.p99)} max ${ms(r.healthz.max)} (${r.healthz.n} polls)`);
      console.log(`  /readyz         p50 ${ms(r.readyz.p50)} p99 ${ms(r.readyz.p99)} max ${ms(r.readyz.max)} (${r.readyz.n} polls; ${r.probeTimeouts} probes unanswered in 10 s)   (goal: p99 < 1 s)`);
      console.log(`  OTLP statuses   ${Object.entries(r.statuses).map(([k, v]) => `${k}: ${v}`).join(', ')}`);
      console.log(`  OTLP slowest    ${Object.entries(r.slowestBy).map(([k, v]) => `${k}: ${ms(v)}`).join(', ')}`);
      console.log(`  OTLP answers    slowest ${ms(r.otlpSlowestMs)}; ${r.otlpOverBound} over sinkTimeoutMs + 1 s or unanswered   (goal: 0)`);
      console.log(`  recovery        ${r.recoveryMs === undefined ? 'not within 30 s' : ms(r.recoveryMs)} from the end of load to a 200 on a small batch with /readyz ready`);
    }
  }

  // Opt-in (minutes: real servers, proxies and a detector per run): npm run bench -- corpus
  if (only.includes('corpus')) {
    console.log('\n# Labelled corpus: real scenarios, ground truth from the wire, findings live and offline (bench/corpus/)');
    // From the sources under tsx: the corpus drives test/e2e helpers and fixtures that are not in build/.
    const root = fileURLToPath(new URL('../../', import.meta.url));
    const r = spawnSync(process.execPath, ['--conditions=forkwatch-source', '--import', 'tsx', 'bench/corpus-main.ts'], { cwd: root, stdio: 'inherit' });
    if (r.status !== 0) process.exitCode = r.status ?? 1;
  }

  // Opt-in (minutes: apps, a proxy, the Collector and two detectors, each its own process): npm run bench -- fleet
  if (only.includes('fleet')) {
    console.log('\n# Fleet: instrumented apps and a proxied server -> the Collector gateway (collector/otel/gateway.yaml) -> two detectors (bench/fleet/)');
    // From the sources under tsx, as the corpus: it drives test/e2e helpers and the demo's seed scenario.
    const root = fileURLToPath(new URL('../../', import.meta.url));
    const r = spawnSync(process.execPath, ['--conditions=forkwatch-source', '--import', 'tsx', 'bench/fleet-main.ts'], { cwd: root, stdio: 'inherit' });
    if (r.status !== 0) process.exitCode = r.status ?? 1;
  }

  if (want('statewrite')) {
    console.log('\n# Session-state write per commit, by session length: 64 sessions x 4 spans each between commits, real SQLite file (WAL);');
    console.log('# whole = every touched session rewritten whole (before schema 3), delta = a delta appended to its log (whole now and then); same rounds, alternating');
    const rows = benchStateWrite();
    for (const r of rows) {
      const whole = rows.find((x) => x.length === r.length && x.mode === 'whole');
      const vs = r.mode === 'delta' && whole ? `   (${((r.encodeUsPerSpan + r.commitUsPerSpan) / (whole.encodeUsPerSpan + whole.commitUsPerSpan)).toFixed(2)}x whole)` : '';
      console.log(
        `  ${String(r.length).padStart(5)} spans/session ${r.mode.padEnd(5)} encode ${r.encodeUsPerSpan.toFixed(2).padStart(6)} µs/span, SQLite ${r.commitUsPerSpan.toFixed(2).padStart(6)} µs/span, ${fmt(r.bytesPerSpan).padStart(6)} B/span written${vs}`,
      );
    }
  }

  if (want('engine')) {
    console.log('\n# Correlation engine alone, and heap per idle tracked session');
    const e = benchEngine();
    console.log(`  ingest          ${fmt(e.ingestSpansPerSec).padStart(10)} spans/s   (${e.sessions} sessions, ${e.spans} spans, ${e.findings} findings)`);
    console.log(`  with decisions  ${fmt(e.endToEndSpansPerSec).padStart(10)} spans/s`);
    console.log(
      Number.isNaN(e.heapBytesPerIdleSession)
        ? '  heap per idle session: run with --expose-gc'
        : `  heap per idle session ${fmt(e.heapBytesPerIdleSession)} B over ${e.idleSessions} sessions   (target < 2048 B)`,
    );
  }
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
