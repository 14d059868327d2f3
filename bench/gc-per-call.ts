/**
 * The garbage collector's work per tool call, counted by V8 itself rather than by instructions:
 * each variant of bench/one-variant.ts runs in a process of its own under `--trace-gc-nvp`, and
 * its GC events are counted over the whole run (start-up and warm-up included: every variant makes
 * the same calls, so they weigh alike). The instruction bench leaves the GC out of its steady
 * figure because one major GC more or less in a window moves a run by several per cent; these
 * counts say what the instrumentation adds to the GC's work: scavenges (each copies what is still
 * alive in the young generation), bytes promoted to the old generation (what later major GCs
 * mark and sweep) and major GCs.
 *
 * GC_SIDES (default none,both), GC_RUNS (runs per variant, interleaved; default 2), GC_APP (default
 * progress-store), GC_CALLS (timed calls after the 1,000-call warm-up; default 3000).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { otlpSink, type BenchApp } from './instrumentation.js';
import { median } from './resample.js';
import { variantProcess, type CountedSides } from './variant-process.js';

const WARMUP = 1000;
const SETTLE_CALLS = 20;

/** One run's GC events, per call. */
export interface GcPerCallRow {
  sides: CountedSides;
  run: number;
  /** Young-generation collections per 1,000 calls. */
  scavengesPerKiloCall: number;
  /** Full (mark-compact) collections per 1,000 calls. */
  markCompactsPerKiloCall: number;
  /** Bytes promoted to the old generation per call. */
  promotedPerCall: number;
  /** The GC's pauses per call, µs of wall time (the process runs --single-threaded: the GC's own work, but timed, so load moves it). */
  pauseUsPerCall: number;
}

interface GcTotals {
  scavenges: number;
  markCompacts: number;
  promoted: number;
  pauseMs: number;
}

/** Sums V8's `--trace-gc-nvp` lines (`pause=1.1 ... gc=s ... promoted=123 ...`). */
export function sumTraceGcNvp(text: string): GcTotals {
  const t: GcTotals = { scavenges: 0, markCompacts: 0, promoted: 0, pauseMs: 0 };
  for (const line of text.split('\n')) {
    const kind = / gc=(\w+) /.exec(line)?.[1];
    if (kind === undefined) continue;
    if (kind === 's') t.scavenges++;
    else if (kind === 'mc') t.markCompacts++;
    t.promoted += Number(/ promoted=(\d+)/.exec(line)?.[1] ?? 0);
    t.pauseMs += Number(/ pause=([\d.]+)/.exec(line)?.[1] ?? 0);
  }
  return t;
}

async function runVariant(sides: CountedSides, app: BenchApp, calls: number, sinkUrl: string): Promise<GcTotals> {
  const script = fileURLToPath(new URL('./one-variant.js', import.meta.url));
  const { importArgs, env } = variantProcess(sides, sinkUrl, 100_000);
  const child = spawn(process.execPath, ['--expose-gc', '--predictable', '--single-threaded', '--trace-gc-nvp', ...importArgs, script], {
    env: { ...process.env, ...env, APP: app, WARMUP: String(WARMUP), N: String(calls) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0 || !out.includes('RUN_OK')) throw new Error(`gc-per-call: ${sides} exited ${code}: ${(err || out).slice(-2000)}`);
  return sumTraceGcNvp(out);
}

/** Every variant of `sides`, `runs` times, interleaved run by run. */
export async function benchGcPerCall(onRow: (row: GcPerCallRow) => void = () => undefined): Promise<GcPerCallRow[]> {
  const sides = (process.env.GC_SIDES ?? 'none,both').split(',').map((s) => s.trim()) as CountedSides[];
  const runs = Number(process.env.GC_RUNS ?? 2);
  const app = (process.env.GC_APP ?? 'progress-store') as BenchApp;
  const calls = Number(process.env.GC_CALLS ?? 3000);
  // one-variant's warm-up, its settling round and the timed calls.
  const allCalls = WARMUP + SETTLE_CALLS + calls;
  const sink = await otlpSink();
  const rows: GcPerCallRow[] = [];
  try {
    for (let run = 0; run < runs; run++) {
      for (const s of sides) {
        const t = await runVariant(s, app, calls, sink.url);
        const row: GcPerCallRow = {
          sides: s,
          run,
          scavengesPerKiloCall: (t.scavenges / allCalls) * 1000,
          markCompactsPerKiloCall: (t.markCompacts / allCalls) * 1000,
          promotedPerCall: t.promoted / allCalls,
          pauseUsPerCall: (t.pauseMs * 1000) / allCalls,
        };
        rows.push(row);
        onRow(row);
      }
    }
  } finally {
    await sink.close();
  }
  return rows;
}

type GcFigure = keyof Omit<GcPerCallRow, 'sides' | 'run'>;

/** One row's figures in words; `over` appends each figure's ratio over a base variant's. */
export function describeGcFigures(r: Omit<GcPerCallRow, 'sides' | 'run'>, over: (k: GcFigure) => string = () => ''): string {
  return `scavenges ${r.scavengesPerKiloCall.toFixed(1)}/1000 calls${over('scavengesPerKiloCall')}, mark-compacts ${r.markCompactsPerKiloCall.toFixed(2)}/1000 calls${over('markCompactsPerKiloCall')}, promoted ${(r.promotedPerCall / 1024).toFixed(1)} KiB/call${over('promotedPerCall')}, pauses ${r.pauseUsPerCall.toFixed(0)} µs/call${over('pauseUsPerCall')}`;
}

/** Each variant's medians over its runs, and their ratios over the first variant's. */
export function summarizeGcRows(rows: GcPerCallRow[]): string[] {
  const bySides = new Map<CountedSides, GcPerCallRow[]>();
  for (const r of rows) bySides.set(r.sides, [...(bySides.get(r.sides) ?? []), r]);
  const [base] = bySides.values();
  const medians = (g: GcPerCallRow[]): Omit<GcPerCallRow, 'sides' | 'run'> => ({
    scavengesPerKiloCall: median(g.map((r) => r.scavengesPerKiloCall)),
    markCompactsPerKiloCall: median(g.map((r) => r.markCompactsPerKiloCall)),
    promotedPerCall: median(g.map((r) => r.promotedPerCall)),
    pauseUsPerCall: median(g.map((r) => r.pauseUsPerCall)),
  });
  const b = base === undefined ? undefined : medians(base);
  return [...bySides.entries()].map(([s, g]) => {
    const m = medians(g);
    const over = (k: GcFigure): string => {
      if (g === base || b === undefined) return '';
      const r = m[k] / b[k] - 1;
      return ` (${r >= 0 ? '+' : ''}${(r * 100).toFixed(1)} %)`;
    };
    return `  ${s.padEnd(12)} ${describeGcFigures(m, over)}`;
  });
}
