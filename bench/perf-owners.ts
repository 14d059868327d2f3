/**
 * Where a detector's CPU goes, from a `perf` recording: each sample is counted once, by the frame
 * nearest its leaf that belongs to a known owner (decode, engine, state encoding, SQLite, GC,
 * compiler, ...), and the leaf functions are listed. V8's own CPU profile samples wall time on the
 * main thread only (a syscall preempted by the exporters it wakes counts as CPU); `perf` counts
 * what ran, on every thread.
 *
 * Record (the detectors with JIT symbols, the whole machine), then read one detector's samples:
 *   FORKWATCH_BENCH_DETECTOR_NODE_ARGS=--perf-basic-prof FORKWATCH_BENCH_WIRE=max \
 *     perf record -F 2999 -g -a -o perf.data -- node --expose-gc build/bench/run.js wire
 *   perf script -i perf.data --pid PID -F tid,time,ip,sym | node build/bench/perf-owners.js PID [SKIP] [TOP]
 * PID: the detector's (with `--trace-gc` through FORKWATCH_BENCH_DETECTOR_STDOUT, V8 prints it
 * first on each line); SKIP: the share of its samples to leave out from the start (default 0.5:
 * start-up and warm-up); TOP: leaf functions listed (default 30).
 */
import { createInterface } from 'node:readline';

/** Owners, tried in this order on each frame from the leaf up; the first frame that matches one decides. */
const OWNERS: ReadonlyArray<readonly [string, RegExp]> = [
  ['gc', /Heap::|Scavenge|MarkCompact|Sweeper|ConcurrentMarking|MarkingVisitor|MinorMark|GCTracer|Evacuat/],
  ['compiler', /compiler::|Compile|[Mm]aglev|Turbofan|Deoptim/],
  ['decode', /\/src\/otlp\//],
  ['state encoding', /\/src\/correlate\/codec\/|byte-writer/],
  ['engine', /\/src\/correlate\//],
  ['store code', /\/src\/storage\//],
  ['ingest pipeline', /\/src\/service\//],
  ['OTLP receiver', /\/src\/http\//],
  ['metrics', /prom-client|\/src\/metrics\//],
  ['fastify', /fastify/],
  ['SQLite', /sqlite3|better_sqlite3|sqliteTransaction/],
  ["Node's HTTP", /node:_http|llhttp|Parser::/],
];

interface Sample {
  tid: string;
  time: number;
  frames: string[];
}

/** Samples of `perf script -F tid,time,ip,sym` output: a header line, then one indented frame per line (leaf first). */
export async function readPerfScript(lines: AsyncIterable<string>): Promise<Sample[]> {
  const samples: Sample[] = [];
  let cur: Sample | undefined;
  for await (const line of lines) {
    if (line.trim() === '') {
      if (cur !== undefined) samples.push(cur);
      cur = undefined;
    } else if (!/^\s/.test(line)) {
      const [tid, time] = line.trim().split(/\s+/);
      cur = { tid: tid ?? '', time: Number.parseFloat(time ?? '0'), frames: [] };
    } else if (cur !== undefined) {
      const parts = line.trim().split(/\s+/);
      cur.frames.push(parts.slice(1).join(' ') || '?');
    }
  }
  if (cur !== undefined) samples.push(cur);
  return samples;
}

/** The owner of a sample's stack; off the main thread, anything but GC and compiler is `other threads`. */
export function ownerOf(s: Sample, mainTid: string): string {
  for (const f of s.frames) {
    for (const [name, re] of OWNERS) {
      if (re.test(f)) return s.tid === mainTid || name === 'gc' || name === 'compiler' ? name : 'other threads';
    }
  }
  return s.tid === mainTid ? 'other (kernel, libuv, V8 runtime)' : 'other threads';
}

async function main(): Promise<void> {
  const pid = process.argv[2];
  if (pid === undefined) throw new Error('usage: perf script ... | node build/bench/perf-owners.js PID [SKIP] [TOP]');
  const skip = Number(process.argv[3] ?? 0.5);
  const top = Number(process.argv[4] ?? 30);
  const all = (await readPerfScript(createInterface({ input: process.stdin }))).sort((a, b) => a.time - b.time);
  const samples = all.slice(Math.floor(all.length * skip));
  const pct = (n: number): string => `${((100 * n) / samples.length).toFixed(1).padStart(5)} %`;
  const owners = new Map<string, number>();
  const leaves = new Map<string, number>();
  let main = 0;
  for (const s of samples) {
    if (s.tid === pid) main++;
    const o = ownerOf(s, pid);
    owners.set(o, (owners.get(o) ?? 0) + 1);
    const leaf = s.frames[0] ?? '?';
    leaves.set(leaf, (leaves.get(leaf) ?? 0) + 1);
  }
  const sorted = (m: Map<string, number>): Array<[string, number]> => [...m].sort((a, b) => b[1] - a[1]);
  console.log(`${samples.length} samples of ${all.length} (the first ${(skip * 100).toFixed(0)} % left out); main thread ${pct(main)}`);
  console.log('by owner (the frame nearest the leaf that has one):');
  for (const [o, n] of sorted(owners)) console.log(`  ${pct(n)}  ${o}`);
  console.log('leaf functions:');
  for (const [f, n] of sorted(leaves).slice(0, top)) console.log(`  ${pct(n)}  ${f.slice(0, 140)}`);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
