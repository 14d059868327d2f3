/**
 * `npm run bench -- instructions`: the instrumentation's cost in CPU instructions per tool call,
 * counted by valgrind (cachegrind, no cache simulation) rather than timed, so the figure does not
 * move with the load of a shared machine. Node runs `--single-threaded` so JIT and GC work is
 * counted on one thread, repeatably. Per-call cost is the difference between a run of LONG and a
 * run of SHORT calls divided by their difference, which cancels start-up and warm-up.
 * Needs valgrind (Debian package `valgrind`); takes a few minutes.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { BenchApp, BenchSides } from './instrumentation.js';

/**
 * requestSpanDelayMs under valgrind, in place of the default 1 s. Valgrind runs node ~50 times
 * slower, so with four calls in flight a call takes about a second of wall time: at the default,
 * a load-dependent share of calls outlived the delay and emitted the spans that the same calls
 * answered in milliseconds never emit (a 100-call run exported 3.7 KB instead of 2.1 KB), and
 * the count moved with the machine's load. Scaled by the slowdown, the same calls are held back
 * as in real time.
 */
const VALGRIND_SPAN_DELAY_MS = 100_000;

const SHORT = 60;
const LONG = 260;

function count(variant: BenchSides, app: BenchApp, calls: number): Promise<number> {
  const script = fileURLToPath(new URL('./one-variant.js', import.meta.url));
  return new Promise((resolve, reject) => {
    const child = spawn(
      'valgrind',
      ['--tool=cachegrind', '--cache-sim=no', '--cachegrind-out-file=/dev/null', process.execPath, '--single-threaded', '--expose-gc', script],
      { env: { ...process.env, VARIANT: variant, APP: app, N: String(calls), REQUEST_SPAN_DELAY_MS: String(VALGRIND_SPAN_DELAY_MS) }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', () => {
      const m = /I\s+refs:\s+([\d,]+)/.exec(out);
      if (!out.includes('RUN_OK') || !m) reject(new Error(`valgrind run of ${app}/${variant} x${calls} failed:\n${out.slice(-2000)}`));
      else resolve(Number(m[1]!.replace(/,/g, '')));
    });
  });
}

export interface InstructionCountRow {
  app: BenchApp;
  sides: BenchSides;
  /** Instructions per tool call. */
  perCall: number;
  /** perCall / the same app's uninstrumented perCall - 1 (0 for the uninstrumented row). */
  overhead: number;
}

/**
 * Every app with no side, both sides, the server alone and the client alone instrumented, each
 * exporting through a BatchSpanProcessor and the real OTLP/protobuf exporter to a local sink.
 * Two valgrind runs at a time (the machine has two cores).
 */
export async function benchInstructionCount(
  apps: BenchApp[] = ['echo', 'progress-store'],
  sides: BenchSides[] = ['none', 'both', 'server', 'client'],
): Promise<InstructionCountRow[]> {
  const rows: InstructionCountRow[] = [];
  for (const app of apps) {
    let plain = NaN;
    for (const side of sides) {
      const [short, long] = await Promise.all([count(side, app, SHORT), count(side, app, LONG)]);
      const perCall = (long - short) / (LONG - SHORT);
      if (side === 'none') plain = perCall;
      rows.push({ app, sides: side, perCall, overhead: side === 'none' ? 0 : perCall / plain - 1 });
    }
  }
  return rows;
}
