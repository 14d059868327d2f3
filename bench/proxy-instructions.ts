/**
 * `npm run bench -- proxy-instructions`: what `forkwatch proxy` adds to a tool call in CPU
 * instructions, counted by valgrind rather than timed, so the figure does not move with the load
 * of a shared machine. Same calls as bench/proxy.ts (a POST answered by 4 id-bearing SSE events,
 * one session, concurrency 8), whole process (client, proxy and upstream), node --single-threaded
 * so that JIT and GC work is counted on the one thread.
 *
 * Method (that of bench/instruction-count.ts): callgrind with instrumentation off during start-up
 * and a WARMUP-call warm-up, then switched on (callgrind_control, in step with the process through
 * a stdin handshake) for exactly two windows of SHORT and LONG calls, each after a full GC; per
 * call = (LONG window - SHORT window) / (LONG - SHORT). The earlier method (cachegrind over whole
 * 300-call and 100-call runs) counted calls 100-300, where V8 was still compiling: TurboFan's
 * one-time work, larger for the variant with more code, was counted as per-call cost, and one
 * tier-up more or less moved the figure by 0.1-0.7 M. The "without V8's compiler" column takes
 * out what is left of it in the windows.
 *
 * requestSpanDelayMs is 100 s under valgrind (it runs node ~50 times slower), so the calls that
 * are answered in milliseconds in real time are not held past the default 1 s here either; the
 * spans column shows what was emitted all the same (0 expected: no moment in this load).
 *
 * Environment: PROXY_INSTR_WARMUP (calls, default 1500), PROXY_INSTR_SHORT / PROXY_INSTR_LONG
 * (window calls, default 150 / 450). Needs valgrind with callgrind_control. Two runs at a time
 * (the machine has two cores); a few minutes in all.
 */
import { existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { callgrindWindows, dumpTotals } from './callgrind-windows.js';
import { jitInstructions } from './instruction-count.js';

export const PROXY_INSTRUCTION_VARIANTS = ['direct', 'bare', 'forkwatch', 'guard'] as const;
export type ProxyInstructionVariant = (typeof PROXY_INSTRUCTION_VARIANTS)[number];

export interface ProxyInstructionRow {
  variant: ProxyInstructionVariant;
  /** Instructions per call. */
  perCall: number;
  /** Instructions per call without V8's optimizing compiler and deoptimizer. */
  perCallNoJit: number;
  /** Spans the proxy emitted per call over the whole run. */
  spansPerCall: number;
  /** Calls retried on a kept-alive socket the server had closed (proxy-one-variant.ts). */
  retries: number;
}

const VALGRIND_SPAN_DELAY_MS = 100_000;

/** Run lengths, from the environment (see the file's comment). */
export function proxyInstructionRunLengths(): { warmup: number; short: number; long: number } {
  const e = process.env;
  return { warmup: Number(e.PROXY_INSTR_WARMUP ?? 1500), short: Number(e.PROXY_INSTR_SHORT ?? 150), long: Number(e.PROXY_INSTR_LONG ?? 450) };
}

async function count(variant: ProxyInstructionVariant): Promise<ProxyInstructionRow> {
  const { warmup, short, long } = proxyInstructionRunLengths();
  const script = fileURLToPath(new URL('./proxy-one-variant.js', import.meta.url));
  const out = join(tmpdir(), `forkwatch-bench-proxy-${process.pid}-${variant}.callgrind`);
  try {
    const { log, dumps } = await callgrindWindows({
      script,
      nodeArgs: ['--single-threaded', '--expose-gc'],
      env: { ...process.env, VARIANT: variant, WARMUP: String(warmup), WINDOWS: `${short},${long}`, REQUEST_SPAN_DELAY_MS: String(VALGRIND_SPAN_DELAY_MS) },
      out,
      label: `proxy/${variant}`,
      windows: 2,
    });
    const totals = dumpTotals(dumps, out);
    const jit = dumps.map(jitInstructions);
    const spans = Number(/^SPANS (\d+)/m.exec(log)?.[1] ?? NaN);
    return {
      variant,
      perCall: (totals[1]! - totals[0]!) / (long - short),
      perCallNoJit: (totals[1]! - jit[1]! - (totals[0]! - jit[0]!)) / (long - short),
      spansPerCall: spans / (warmup + 20 + short + 20 + long),
      retries: Number(/^RETRIES (\d+)/m.exec(log)?.[1] ?? NaN),
    };
  } finally {
    for (const f of [out, `${out}.1`, `${out}.2`]) if (existsSync(f)) rmSync(f);
  }
}

/** Instructions per call of each variant; two valgrind runs at a time (the machine has two cores). */
export async function benchProxyInstructions(): Promise<ProxyInstructionRow[]> {
  const rows: ProxyInstructionRow[] = [];
  for (let i = 0; i < PROXY_INSTRUCTION_VARIANTS.length; i += 2) {
    // allSettled: a failed run must not leave its sibling running unobserved.
    for (const r of await Promise.allSettled(PROXY_INSTRUCTION_VARIANTS.slice(i, i + 2).map(count))) {
      if (r.status === 'rejected') throw r.reason;
      rows.push(r.value);
    }
  }
  return rows;
}

/** Runs the bench and prints its table (`npm run bench -- proxy-instructions`). */
export async function printProxyInstructions(print: (line: string) => void): Promise<void> {
  const { warmup, short, long } = proxyInstructionRunLengths();
  print(`\n# Sidecar proxy in instructions per tool call (valgrind callgrind, node --single-threaded; after a ${warmup}-call warm-up, a ${long}-call`);
  print(`# minus a ${short}-call window; whole process: client, proxy, upstream; a POST answered by 4 id-bearing SSE events, concurrency 8)`);
  const rows = await benchProxyInstructions();
  const bare = rows.find((r) => r.variant === 'bare')!;
  const m = (x: number): string => (x / 1e6).toFixed(3);
  for (const r of rows) {
    const proxy = r.variant === 'forkwatch' || r.variant === 'guard';
    const vsBare = proxy ? `  +${m(r.perCall - bare.perCall)} M over the bare pipe (${(r.perCall / bare.perCall).toFixed(2)}x; calls/s CPU-bound ${(bare.perCall / r.perCall).toFixed(2)}x)` : '';
    const noJit = `without V8's compiler ${m(r.perCallNoJit)} M${proxy ? ` (${(r.perCallNoJit / bare.perCallNoJit).toFixed(2)}x)` : ''}`;
    print(`  ${r.variant.padEnd(10)} ${m(r.perCall).padStart(8)} M instructions/call${vsBare.padEnd(82)} | ${noJit} | ${r.spansPerCall.toFixed(3)} spans/call${r.retries > 0 ? `, ${r.retries} calls retried` : ''}`);
  }
  print('  goal: calls/s >= 0.9x the bare pipe\'s, i.e. <= 1.11x its instructions per call');
}
