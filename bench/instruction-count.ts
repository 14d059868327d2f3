/**
 * `npm run bench -- instructions`: the instrumentation's cost in CPU instructions per tool call,
 * counted by valgrind (cachegrind, no cache simulation) rather than timed, so the figure does not
 * move with the load of a shared machine. Node runs `--single-threaded` so JIT and GC work is
 * counted on one thread, repeatably. Per-call cost is the difference between a run of LONG and a
 * run of SHORT calls divided by their difference, which cancels start-up and warm-up; spans
 * exported per call are counted the same way, at an OTLP sink in this process (not counted).
 * Needs valgrind (Debian package `valgrind`); takes a few minutes per variant. One valgrind run at
 * a time: the figures do not depend on it, but the machine is shared.
 *
 * Environment: INSTR_SHORT / INSTR_LONG (calls, default 60 / 560), INSTR_APPS (comma list of
 * echo, progress-store), INSTR_SIDES (comma list of none, both, server, client, zero-code).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { otlpSink, type BenchApp, type SinkCounts } from './instrumentation.js';

/**
 * requestSpanDelayMs under valgrind, in place of the default 1 s. Valgrind runs node ~50 times
 * slower, so with four calls in flight a call takes about a second of wall time: at the default,
 * a load-dependent share of calls outlived the delay and emitted the spans that the same calls
 * answered in milliseconds never emit (a 100-call run exported 3.7 KB instead of 2.1 KB), and
 * the count moved with the machine's load. Scaled by the slowdown, the same calls are held back
 * as in real time. The spans/call column shows what was emitted all the same.
 */
const VALGRIND_SPAN_DELAY_MS = 100_000;

/** What a variant instruments: one side, both, or both through `--import .../register`. */
export type CountedSides = 'none' | 'both' | 'server' | 'client' | 'zero-code';

interface Run {
  instructions: number;
  counts: SinkCounts;
}

async function count(variant: CountedSides, app: BenchApp, calls: number): Promise<Run> {
  const script = fileURLToPath(new URL('./one-variant.js', import.meta.url));
  const sink = await otlpSink();
  const nodeArgs = ['--single-threaded', '--expose-gc'];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    VARIANT: variant,
    APP: app,
    N: String(calls),
    SINK_URL: sink.url,
    REQUEST_SPAN_DELAY_MS: String(VALGRIND_SPAN_DELAY_MS),
  };
  if (variant === 'zero-code') {
    nodeArgs.push('--import', '@forkwatch/instrumentation/register');
    Object.assign(env, {
      FORKWATCH_REQUEST_SPAN_DELAY_MS: String(VALGRIND_SPAN_DELAY_MS),
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: sink.url,
      OTEL_METRICS_EXPORTER: 'none',
      OTEL_LOGS_EXPORTER: 'none',
      OTEL_SERVICE_NAME: 'bench',
    });
  }
  try {
    const instructions = await new Promise<number>((resolve, reject) => {
      const child = spawn('valgrind', ['--tool=cachegrind', '--cache-sim=no', '--cachegrind-out-file=/dev/null', process.execPath, ...nodeArgs, script], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
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
    return { instructions, counts: sink.counts() };
  } finally {
    await sink.close();
  }
}

export interface InstructionCountRow {
  app: BenchApp;
  sides: CountedSides;
  /** Instructions per tool call. */
  perCall: number;
  /** perCall / the same app's uninstrumented perCall - 1 (0 for the uninstrumented row). */
  overhead: number;
  /** Spans exported per call, all names. */
  spansPerCall: number;
  /** forkwatch spans exported per call, by name. */
  spansByName: Record<string, number>;
  /**
   * Moments per call: a resume (`forkwatch.resume`) or a request reported late
   * (`forkwatch.request.sent` / `request.received` outside initialize), what turns emission of a
   * session's event history on (docs/telemetry.md, "When event history is emitted").
   */
  momentsPerCall: number;
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
): Promise<InstructionCountRow[]> {
  const short = Number(process.env.INSTR_SHORT ?? 60);
  const long = Number(process.env.INSTR_LONG ?? 560);
  const rows: InstructionCountRow[] = [];
  for (const app of apps) {
    let plain = NaN;
    for (const side of sides) {
      if (side === 'zero-code' && app !== 'progress-store') continue;
      const a = await count(side, app, short);
      const b = await count(side, app, long);
      const calls = long - short;
      const perCall = (b.instructions - a.instructions) / calls;
      if (side === 'none') plain = perCall;
      const spansByName: Record<string, number> = {};
      for (const name of new Set([...Object.keys(a.counts.byName), ...Object.keys(b.counts.byName)])) {
        spansByName[name] = ((b.counts.byName[name] ?? 0) - (a.counts.byName[name] ?? 0)) / calls;
      }
      const momentsPerCall = (spansByName['forkwatch.resume'] ?? 0) + (spansByName['forkwatch.request.sent'] ?? 0) + (spansByName['forkwatch.request.received'] ?? 0);
      rows.push({
        app,
        sides: side,
        perCall,
        overhead: side === 'none' ? 0 : perCall / plain - 1,
        spansPerCall: (b.counts.spans - a.counts.spans) / calls,
        spansByName,
        momentsPerCall,
      });
    }
  }
  return rows;
}

/** The calls per run, for the report. */
export function instructionRunLengths(): { short: number; long: number } {
  return { short: Number(process.env.INSTR_SHORT ?? 60), long: Number(process.env.INSTR_LONG ?? 560) };
}
