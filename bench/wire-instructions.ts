/**
 * `npm run bench -- wire-instructions`: the detector's in-process work on the wire benchmark's
 * payloads (bench/wire-pipeline.ts: decode, engine, tick, sliced group commits into SQLite) in CPU
 * instructions per span, counted by valgrind (cachegrind, no cache simulation) under
 * `node --predictable --single-threaded`: GC and JIT work is counted on one thread, and V8 makes
 * its decisions without the wall clock (with `--single-threaded` alone, GC heuristics timed
 * under valgrind on a loaded machine moved two runs of one commit by up to 8 %). Two runs of SHORT and LONG passes (each pass the
 * payloads with new session keys); per span = (LONG run - SHORT run) / the spans of the passes
 * between, which cancels start-up and payload loading. It does not cancel compilation: V8 still
 * optimizes (the decision path first runs in pass 2) and re-optimizes functions in passes 3 and 4,
 * and how much of that falls there moves with any change to the code (2,000-9,000 instructions per
 * span between builds). Each line therefore also gives the figure without V8's optimizing compiler
 * and deoptimizer (which a long-running detector pays once), and without them and the GC, by
 * the names of their C++ functions in cachegrind's output (bench/instruction-count.ts).
 *
 * Environment: FORKWATCH_BENCH_WIRE_INSTR_PASSES (default `2,4`), FORKWATCH_BENCH_WIRE_INSTR_RATIOS
 * (forkwatch share of the spans, default `1`; `0.2` runs five times the spans),
 * FORKWATCH_BENCH_WIRE_INSTR_KEEP=DIR (keep each run's cachegrind output there as
 * `cg-RATIO-PASSES.out`, for `cg_diff` and `cg_annotate` per function). Needs valgrind;
 * about 4 minutes per run on a quiet core at the defaults.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GC_FUNCTION, JIT_FUNCTION } from './instruction-count.js';

interface Run {
  instructions: number;
  /** Of which V8's optimizing compiler and deoptimizer, and its garbage collector (self instructions). */
  jit: number;
  gc: number;
  spans: number;
  forkwatchSpans: number;
  transactions: number;
}

function countRun(ratio: number, passes: number, dir: string): Run {
  const out = join(dir, `cg-${ratio}-${passes}.out`);
  const entry = fileURLToPath(new URL('./wire-pipeline.js', import.meta.url));
  const r = spawnSync('valgrind', ['--tool=cachegrind', '--cache-sim=no', `--cachegrind-out-file=${out}`, process.execPath, '--predictable', '--single-threaded', entry, String(ratio), String(passes)], {
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`valgrind run failed (${r.status ?? r.signal}): ${r.stderr.slice(-2000)}`);
  const text = readFileSync(out, 'utf8');
  const summary = /^summary:\s+(\d+)/m.exec(text);
  if (!summary) throw new Error('no cachegrind summary');
  const line = r.stdout.trim().split('\n').pop()!;
  return { instructions: Number(summary[1]), jit: selfInstructions(text, JIT_FUNCTION), gc: selfInstructions(text, GC_FUNCTION), ...(JSON.parse(line) as Omit<Run, 'instructions' | 'jit' | 'gc'>) };
}

/** Self instructions of the functions whose names match `pattern` in a cachegrind output file (`fn=NAME`, then `LINE COUNT` lines). */
function selfInstructions(text: string, pattern: RegExp): number {
  let hit = false;
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('fn=')) hit = pattern.test(line.slice(3));
    else if (hit && line.charCodeAt(0) >= 48 && line.charCodeAt(0) <= 57) sum += Number(line.split(' ')[1] ?? 0);
  }
  return sum;
}

/** Runs the counts and prints their lines; prints why not when valgrind is absent. */
export function benchWireInstructions(print: (line: string) => void): void {
  if (spawnSync('valgrind', ['--version']).status !== 0) {
    print('  skipped: valgrind is not installed');
    return;
  }
  const [short, long] = (process.env.FORKWATCH_BENCH_WIRE_INSTR_PASSES ?? '2,4').split(',').map(Number) as [number, number];
  const ratios = (process.env.FORKWATCH_BENCH_WIRE_INSTR_RATIOS ?? '1').split(',').map(Number);
  const keep = process.env.FORKWATCH_BENCH_WIRE_INSTR_KEEP;
  const dir = keep ?? mkdtempSync(join(tmpdir(), 'forkwatch-wire-instr-'));
  try {
    for (const ratio of ratios) {
      const a = countRun(ratio, short, dir);
      const b = countRun(ratio, long, dir);
      const spans = b.spans - a.spans;
      const fw = b.forkwatchSpans - a.forkwatchSpans;
      const per = (b.instructions - a.instructions) / spans;
      const noJit = (b.instructions - b.jit - (a.instructions - a.jit)) / spans;
      const noJitNoGc = noJit - (b.gc - a.gc) / spans;
      const n = (v: number): string => Math.round(v).toLocaleString('en-US');
      print(
        `  ${String(ratio * 100).padStart(3)} % forkwatch: ${n(per)} instructions per span in (${n((b.instructions - a.instructions) / fw)} per forkwatch span); without V8's optimizing compiler ${n(noJit)}, and without its GC ${n(noJitNoGc)} | runs of ${short} and ${long} passes: ${(a.instructions / 1e9).toFixed(3)} G and ${(b.instructions / 1e9).toFixed(3)} G instructions, ${a.transactions} and ${b.transactions} SQLite transactions`,
      );
    }
  } finally {
    if (keep === undefined) rmSync(dir, { recursive: true, force: true });
  }
}
