/**
 * Reads a `perf record` of one proxy process (cpu-clock samples, JIT names from
 * `--perf-basic-prof`) into CPU per call by where it went: the main thread's JavaScript (the
 * proxy's own, Node's), V8's builtins and runtime, Node's native code, libc, the kernel, and the
 * other threads (V8's compiler and collector helpers). For bench/sidecar-profile.ts.
 */
import { spawnSync } from 'node:child_process';

/** Samples by symbol, the main thread's apart. */
export interface PerfSamples {
  main: Map<string, number>;
  helpers: Map<string, number>;
}

/** Parses `perf report -n --sort pid,sym` of `file`; `mainPid` names the main thread (its tid is the pid). */
export function readPerf(file: string, mainPid: number): PerfSamples {
  const r = spawnSync('perf', ['report', '-i', file, '-n', '--no-children', '--sort', 'pid,sym', '--stdio', '-g', 'none', '--percent-limit', '0'], {
    encoding: 'utf8',
    maxBuffer: 64 * 2 ** 20,
  });
  if (r.status !== 0) throw new Error(`perf report failed: ${r.stderr}`);
  const main = new Map<string, number>();
  const helpers = new Map<string, number>();
  for (const line of r.stdout.split('\n')) {
    const m = /^\s+[\d.]+%\s+(\d+)\s+(\d+):\S*\s+(.*)$/.exec(line);
    if (!m) continue;
    // One name per function, whatever tier V8 compiled it in (`*` optimized, `^` baseline, `~` interpreted).
    const sym = m[3]!.trim().replace(/JS:[*^~]/, 'JS:');
    const into = Number(m[2]) === mainPid ? main : helpers;
    into.set(sym, (into.get(sym) ?? 0) + Number(m[1]));
  }
  return { main, helpers };
}

/** Where a main-thread symbol's time goes; `ownCode` marks the proxy's own JavaScript (a path in its URL). */
export function category(sym: string, ownCode: (sym: string) => boolean): string {
  if (sym.startsWith('[k]')) return 'kernel';
  if (sym.includes('JS:')) return ownCode(sym) ? 'JavaScript, the proxy\'s own' : 'JavaScript, Node\'s';
  if (sym.includes('compiler::')) return 'V8 compiler (main thread)';
  if (/Scaveng|Heap|Sweep|Mark|Evacuat|GC/.test(sym)) return 'collector (main thread)';
  if (sym.includes('Builtins_')) return 'V8 builtins';
  if (/llhttp|node::|uv_|uv__/.test(sym)) return 'Node native';
  if (sym.includes('v8::')) return 'V8 runtime';
  return 'libc, other';
}

/** Samples summed by category (the helper threads as one). */
export function byCategory(s: PerfSamples, ownCode: (sym: string) => boolean): Map<string, number> {
  const out = new Map<string, number>();
  for (const [sym, n] of s.main) {
    const c = category(sym, ownCode);
    out.set(c, (out.get(c) ?? 0) + n);
  }
  let helpers = 0;
  for (const n of s.helpers.values()) helpers += n;
  out.set('other threads (compiler, collector)', helpers);
  return out;
}

/** The other threads' samples in V8's compiler. */
export function compilerSamples(s: PerfSamples): number {
  let n = 0;
  for (const [sym, k] of s.helpers) if (sym.includes('compiler::')) n += k;
  return n;
}
