/**
 * `npm run bench -- instructions`: the instrumentation's cost in CPU instructions per tool call,
 * counted by valgrind rather than timed, so the figure does not move with the load of a shared
 * machine. Node runs `--predictable --single-threaded` (every variant alike): JIT and GC work is
 * counted on one thread, and V8 makes its heuristic decisions (when to mark, when to tier up)
 * without the wall clock, which under valgrind on a shared machine moves with the load (single
 * runs of one variant under `--single-threaded` alone differed by up to 5 %).
 *
 * Method: callgrind with instrumentation off during start-up and a WARMUP-call warm-up, then
 * switched on (callgrind_control, in step with the process through a stdin handshake) for exactly
 * two windows of SHORT and LONG calls, each after a full GC; per call is (LONG window - SHORT
 * window) / (LONG - SHORT), which cancels what a window costs regardless of its length.
 *
 * Why the warm-up: V8 keeps compiling for thousands of calls (node --trace-opt on this app: ~240
 * TurboFan compiles in the first 500 calls, ~100 in calls 1,000-1,500, ~15 in calls 3,000-3,500,
 * < 10 per 500 after 4,000), and under --single-threaded that compilation is counted on the
 * calls that trigger it. The earlier method (cachegrind, 260-call minus 60-call runs after 320
 * warm-up calls) counted calls 380-580, where TurboFan alone was 3.7 M instructions per call
 * uninstrumented and 9.4 M instrumented (callgrind, same window): a one-time cost of compiling more
 * code, reported as +75.6 % per call. A server pays it once, not per call.
 *
 * Spans and moments per call are counted at an OTLP sink in this process (not counted), over the
 * whole run. Needs valgrind (Debian package `valgrind`, with callgrind_control); about 0.4 s of
 * wall time per call: minutes per variant. One valgrind run at a time.
 *
 * Environment: INSTR_WARMUP (calls, default 1000), INSTR_SHORT / INSTR_LONG (window calls,
 * default 100 / 300), INSTR_APPS (comma list of echo, progress-store), INSTR_SIDES (comma list of
 * none, both, server, client, zero-code, sdk-only, sdk-explicit, eager), INSTR_KEEP=1 (keep the windows' callgrind dumps),
 * INSTR_RUNS (runs per variant, default 1; the variants of an app are interleaved run by run, so a
 * drift of the machine falls on all of them, and each variant's median and range is summed up),
 * INSTR_SLOWDOWN (the factor the instrumentation's wall-clock bounds are scaled by, default 100:
 * bench/valgrind-delays.ts; each row reports its slowest counted call and the counted calls that
 * outlived the scaled `requestSpanDelayMs`).
 */
import { existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { selfCostOf } from './callgrind-costs.js';
import { callgrindWindows, dumpTotals } from './callgrind-windows.js';
import { otlpSink, type BenchApp, type SinkCounts } from './instrumentation.js';
import { ratioOfMediansInterval } from './resample.js';
import { scaledDelays } from './valgrind-delays.js';
import { UNDER_SDK, variantProcess, type CountedSides } from './variant-process.js';


/**
 * Variants (bench/variant-process.ts): `eager` is both sides with `maxBufferedPayloadChars: 0`,
 * every buffered event digested and read as it passes (the behaviour before payloads were kept
 * undigested): the deferred digest's gain and its garbage collector's cost, side by side in one
 * command. `sdk-only`: zero-code's process (NodeSDK, the same OTEL_* variables and sink) without
 * forkwatch (bench/sdk-only-register.ts, which exports one span at start as any exporting NodeSDK
 * app does): zero-code over it is forkwatch's own cost on a NodeSDK app, it over none is
 * NodeSDK's. `sdk-explicit`: the same NodeSDK with both sides instrumented explicitly (as `both`,
 * with the global tracer provider): zero-code over it is the patching path's own cost, it over
 * sdk-only forkwatch's work under NodeSDK's globals (context manager, W3C propagator).
 */
export type { CountedSides } from './variant-process.js';

interface Run {
  /** Instructions of the SHORT and the LONG window. */
  windows: [number, number];
  /** Of which V8's optimizing compiler and deoptimizer (see {@link jitInstructions}). */
  jit: [number, number];
  /** Of which V8's garbage collector (see {@link gcInstructions}). */
  gc: [number, number];
  /** Of which JIT-compiled JavaScript (see {@link jsInstructions}). */
  js: [number, number];
  counts: SinkCounts;
  /** The counted calls' wall time (bench/one-variant.ts, `LATE`). */
  late: LateCalls;
}

/** Wall time of the counted calls against the scaled `requestSpanDelayMs` (bench/valgrind-delays.ts). */
export interface LateCalls {
  /** The slowest counted call, ms of wall time. */
  slowestMs: number;
  /** Counted calls that took the scaled delay or longer: each may have emitted spans a real run would not. */
  pastDelay: number;
  calls: number;
}


/** Run lengths, from the environment (see the file's comment). */
export function instructionRunLengths(): { warmup: number; short: number; long: number; runs: number } {
  return {
    warmup: Number(process.env.INSTR_WARMUP ?? 1000),
    short: Number(process.env.INSTR_SHORT ?? 100),
    long: Number(process.env.INSTR_LONG ?? 300),
    runs: Math.max(1, Number(process.env.INSTR_RUNS ?? 1)),
  };
}

async function count(variant: CountedSides, app: BenchApp, run: number): Promise<Run> {
  const { warmup, short, long } = instructionRunLengths();
  const script = fileURLToPath(new URL('./one-variant.js', import.meta.url));
  const sink = await otlpSink();
  // Every wall-clock bound scaled by the slowdown (bench/valgrind-delays.ts).
  const delays = scaledDelays();
  const { importArgs, env: variantEnv } = variantProcess(variant, sink.url, delays.requestSpanDelayMs, delays.deliveryTimeoutMs);
  const nodeArgs = ['--predictable', '--single-threaded', '--expose-gc', ...importArgs];
  const env: NodeJS.ProcessEnv = { ...process.env, ...variantEnv, APP: app, WARMUP: String(warmup), WINDOWS: `${short},${long}` };
  // The run's index in the name: INSTR_KEEP=1 keeps every run's dumps, not the last run's.
  const out = join(tmpdir(), `forkwatch-bench-${process.pid}-${variant}-${app}-r${run + 1}.callgrind`);
  try {
    const { dumps, log } = await callgrindWindows({ script, nodeArgs, env, out, label: `${app}/${variant}`, windows: 2 });
    const windows = dumpTotals(dumps, out) as [number, number];
    return { windows, jit: dumps.map(jitInstructions) as [number, number], gc: dumps.map(gcInstructions) as [number, number], js: dumps.map(jsInstructions) as [number, number], counts: sink.counts(), late: lateCalls(log) };
  } finally {
    // INSTR_KEEP=1 keeps the windows' callgrind dumps (callgrind_annotate reads them) and says where.
    if (process.env.INSTR_KEEP) console.log(`  (callgrind dumps of ${app}/${variant}: ${out}.1, ${out}.2)`);
    else for (const f of [out, `${out}.1`, `${out}.2`]) if (existsSync(f)) rmSync(f);
    await sink.close();
  }
}

/** The child's `LATE {json}` line; a child that printed none is an error (it did not time its calls). */
export function lateCalls(log: string): LateCalls {
  const m = /^LATE (\{.*\})$/m.exec(log);
  if (!m) throw new Error('the bench child printed no LATE line (bench/one-variant.ts)');
  return JSON.parse(m[1]!) as LateCalls;
}

/** V8's optimizing compiler and deoptimizer, by the names of their C++ functions. */
export const JIT_FUNCTION = /v8::internal::compiler::|Deoptimizer|TranslatedState|TranslatedFrame|TranslationArray/;

/**
 * V8's garbage collector (scavenger, marking, sweeping, evacuation and compaction, write
 * barriers), by the names of its C++ functions and builtins. The compaction phase of a full GC
 * (live-object iteration, slot recording and pointer updating) was missed until 2026-12-03 and
 * counted with the runtime: 0.11-0.15 M per call of it fell in one 300-call window and not in the
 * other's, which moved the "without compiler and GC" figure by ~1.5 %. So was a full GC's walk of
 * code objects and bytecode ages during marking (`RelocIterator` through `VisitRelocInfo`, ~75 %
 * of its calls, the rest the compiler's; `NeedsResetDueToFlushedBytecode`, `ShouldFlushCode`) and
 * the scavenger's promotion test, until 2026-12-04: two uninstrumented echo runs of one command
 * differed by 0.045 M per call outside the pattern, 0.024 M of it in these.
 */
export const GC_FUNCTION =
  /Scaveng|Mark(?:ing|Compact|Bit|Barrier)|Sweep|Evacuat|heap::base::|Worklist|RecordWrite|IncrementalMarking|Heap::|HeapObject::SizeFromMap|PretenuringHandler|MemoryChunk|ActiveSystemPages|PagedSpace|NewSpace|SemiSpace|LargeObjectSpace|GlobalHandles|IterateObjectCache|BodyDescriptor|RememberedSet|SlotSet|FreeList|Page::|cppgc|LiveObjectRange|RecordMigratedSlot|PointersUpdatingVisitor|StringTableCleaner|CompactionSpace|RelocIterator|VisitRelocInfo|FlushedBytecode|ShouldFlushCode|ShouldBePromoted|UsedInstanceSize/;

/**
 * Self instructions of V8's optimizing compiler and deoptimizer in a callgrind dump: work that
 * goes on for thousands of calls after start (see the file's comment) and that a long-running
 * process pays once, not per call.
 */
export function jitInstructions(dump: string): number {
  return selfInstructions(dump, JIT_FUNCTION);
}

/**
 * Self instructions of V8's garbage collector in a callgrind dump. A major GC's marking runs
 * every few hundred calls here, so whether one falls in a window moves a single run's total by
 * several per cent; the figure without it (and without the compiler) is the steady one.
 */
export function gcInstructions(dump: string): number {
  return selfInstructions(dump, GC_FUNCTION);
}

/**
 * Self instructions of JIT-compiled JavaScript in a callgrind dump: code in no mapped file
 * (callgrind's object `???`: V8's generated code; its builtins are in the node binary). The part
 * of a window that moved least between runs of the same code (0.73-0.75 M per call in four
 * uninstrumented runs of progress-store), and the one the instrumentation's own JavaScript adds to.
 */
export function jsInstructions(dump: string): number {
  return selfCostOf(dump, 'ob', (name) => name === '???');
}

/** Self instructions of the functions whose names match `pattern`. */
function selfInstructions(dump: string, pattern: RegExp): number {
  return selfCostOf(dump, 'fn', (name) => pattern.test(name));
}

export interface InstructionCountRow {
  app: BenchApp;
  sides: CountedSides;
  /** Which of the INSTR_RUNS runs (0-based); its overheads are against the same run's uninstrumented row. */
  run: number;
  /** Instructions per tool call. */
  perCall: number;
  /** perCall / the same app's uninstrumented perCall - 1 (0 for the uninstrumented row). */
  overhead: number;
  /** Instructions per call without V8's optimizing compiler and deoptimizer. */
  perCallNoJit: number;
  /** perCallNoJit against the uninstrumented row's. */
  overheadNoJit: number;
  /** Instructions per call without the compiler and deoptimizer and without the GC. */
  perCallNoJitNoGc: number;
  /** perCallNoJitNoGc against the uninstrumented row's. */
  overheadNoJitNoGc: number;
  /** The GC's instructions per call (its difference to the uninstrumented row is what the instrumentation's garbage costs, give or take a major GC). */
  gcPerCall: number;
  /** JIT-compiled JavaScript's own instructions per call: the steadiest part (see {@link jsInstructions}). */
  jsPerCall: number;
  /** Spans exported per call over the whole run (warm-up included), all names. */
  spansPerCall: number;
  /** forkwatch spans exported per call, by name. */
  spansByName: Record<string, number>;
  /**
   * Moments per call: resumes (`forkwatch.resume`) and requests reported late
   * (`forkwatch.request.sent` / `request.received`; the client's initialize, sent at once, is one
   * per run), what turns emission of a session's event history on (docs/telemetry.md, "When event
   * history is emitted"). Over the whole run, like the span counts.
   */
  momentsPerCall: number;
  /** The counted calls' wall time against the scaled delay: `pastDelay` 0 means none emitted what a real run would not. */
  late: LateCalls;
}

const list = <T extends string>(v: string | undefined, dflt: T[]): T[] => (v ? (v.split(',').map((s) => s.trim()) as T[]) : dflt);

/**
 * Every app with no side, both sides, the server alone and the client alone instrumented, each
 * exporting through a BatchSpanProcessor and the real OTLP/protobuf exporter to a local sink; and
 * the progress-store app under `--import @forkwatch/instrumentation/register` (NodeSDK, its OTLP
 * exporter configured by OTEL_* variables).
 */
export async function benchInstructionCount(
  apps: BenchApp[] = list(process.env.INSTR_APPS, ['echo', 'progress-store']),
  sides: CountedSides[] = list(process.env.INSTR_SIDES, ['none', 'both', 'server', 'client', 'zero-code']),
  onRow: (row: InstructionCountRow) => void = () => undefined,
): Promise<InstructionCountRow[]> {
  const { warmup, short, long, runs } = instructionRunLengths();
  // Every call of the run, warm-up and the 20-call settling rounds before each window included.
  const allCalls = warmup + 20 + short + 20 + long;
  const rows: InstructionCountRow[] = [];
  for (const app of apps) for (let run = 0; run < runs; run++) {
    let plain = NaN;
    let plainNoJit = NaN;
    let plainNoJitNoGc = NaN;
    for (const side of sides) {
      // With an event store only: eager differs from 'both' only where events are buffered, and
      // zero-code, sdk-only and sdk-explicit stand for the docs' zero-code row, measured on that app.
      if ((UNDER_SDK.has(side) || side === 'eager') && app !== 'progress-store') continue;
      const r = await count(side, app, run);
      const perCall = (r.windows[1] - r.windows[0]) / (long - short);
      const perCallNoJit = (r.windows[1] - r.jit[1] - (r.windows[0] - r.jit[0])) / (long - short);
      const gcPerCall = (r.gc[1] - r.gc[0]) / (long - short);
      const perCallNoJitNoGc = perCallNoJit - gcPerCall;
      if (side === 'none') {
        plain = perCall;
        plainNoJit = perCallNoJit;
        plainNoJitNoGc = perCallNoJitNoGc;
      }
      const spansByName: Record<string, number> = {};
      for (const [name, n] of Object.entries(r.counts.byName)) spansByName[name] = n / allCalls;
      const momentsPerCall = (spansByName['forkwatch.resume'] ?? 0) + (spansByName['forkwatch.request.sent'] ?? 0) + (spansByName['forkwatch.request.received'] ?? 0);
      const row: InstructionCountRow = {
        app,
        sides: side,
        run,
        perCall,
        overhead: side === 'none' ? 0 : perCall / plain - 1,
        perCallNoJit,
        overheadNoJit: side === 'none' ? 0 : perCallNoJit / plainNoJit - 1,
        perCallNoJitNoGc,
        overheadNoJitNoGc: side === 'none' ? 0 : perCallNoJitNoGc / plainNoJitNoGc - 1,
        gcPerCall,
        jsPerCall: (r.js[1] - r.js[0]) / (long - short),
        spansPerCall: r.counts.spans / allCalls,
        spansByName,
        momentsPerCall,
        late: r.late,
      };
      rows.push(row);
      // Printed as measured: a full run takes tens of minutes.
      onRow(row);
    }
  }
  return rows;
}

/** One figure over a variant's runs: median, lowest and highest. */
export interface RunSpread {
  median: number;
  min: number;
  max: number;
}

/** A variant over its INSTR_RUNS runs. */
export interface InstructionCountSummary {
  app: BenchApp;
  sides: CountedSides;
  runs: number;
  perCall: RunSpread;
  perCallNoJitNoGc: RunSpread;
  jsPerCall: RunSpread;
  /** Median perCall against the median of the same app's uninstrumented runs, minus 1 (NaN without them). */
  overhead: number;
  /** The same for perCallNoJitNoGc, the figure that stays put between runs. */
  overheadNoJitNoGc: number;
  /**
   * Bootstrap 90 % interval of overheadNoJitNoGc (each variant's runs resampled on their own;
   * see bench/resample.ts); undefined with fewer than two runs of either variant.
   */
  overheadNoJitNoGcInterval?: { lo: number; hi: number };
}

const spread = (xs: number[]): RunSpread => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return { median: s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2, min: s[0]!, max: s[s.length - 1]! };
};

/** Each (app, sides) of `rows` over its runs, in the order first measured. */
export function summarizeInstructionRows(rows: InstructionCountRow[]): InstructionCountSummary[] {
  const groups = new Map<string, InstructionCountRow[]>();
  for (const r of rows) {
    const key = `${r.app}/${r.sides}`;
    const g = groups.get(key);
    if (g) g.push(r);
    else groups.set(key, [r]);
  }
  return [...groups.values()].map((g) => {
    const { app, sides } = g[0]!;
    const plain = groups.get(`${app}/none`) ?? [];
    const perCall = spread(g.map((r) => r.perCall));
    const perCallNoJitNoGc = spread(g.map((r) => r.perCallNoJitNoGc));
    const plainPerCall = plain.length ? spread(plain.map((r) => r.perCall)).median : NaN;
    const plainNoJitNoGc = plain.length ? spread(plain.map((r) => r.perCallNoJitNoGc)).median : NaN;
    const interval = sides !== 'none' && plain.length > 1 && g.length > 1 ? ratioOfMediansInterval(plain.map((r) => r.perCallNoJitNoGc), g.map((r) => r.perCallNoJitNoGc)) : undefined;
    return {
      app,
      sides,
      runs: g.length,
      perCall,
      perCallNoJitNoGc,
      jsPerCall: spread(g.map((r) => r.jsPerCall)),
      overhead: perCall.median / plainPerCall - 1,
      overheadNoJitNoGc: perCallNoJitNoGc.median / plainNoJitNoGc - 1,
      ...(interval ? { overheadNoJitNoGcInterval: interval } : {}),
    };
  });
}
