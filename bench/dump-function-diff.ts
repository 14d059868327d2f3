/**
 * Per-function difference of two variants' kept callgrind dumps (`INSTR_KEEP=1 npm run bench --
 * instructions`), per call: each function's self instructions in the LONG window minus the SHORT
 * one, divided by LONG - SHORT, A minus B, largest first. What a variant adds, by function, where
 * callgrind names it (builtins and C++; JIT-compiled JavaScript is one address per code object,
 * `???`, and is left out: `node --perf-basic-prof` with `perf` names it).
 *
 *   node build/bench/dump-function-diff.js SHORT LONG A.1 A.2 B.1 B.2 [TOP]
 *
 * Reads the dumps through `callgrind_annotate --inclusive=no` (valgrind's own tool).
 */
import { execFileSync } from 'node:child_process';

const [shortArg, longArg, a1, a2, b1, b2, topArg] = process.argv.slice(2);
const calls = Number(longArg) - Number(shortArg);
if (!(calls > 0) || b2 === undefined) {
  console.error('usage: dump-function-diff.js SHORT LONG A.1 A.2 B.1 B.2 [TOP]');
  process.exit(2);
}

/** Self instructions by function name in one dump; JIT code (no name, an address) left out. */
function selfByFunction(path: string): Map<string, number> {
  const out = execFileSync('callgrind_annotate', ['--threshold=100', '--inclusive=no', path], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const byName = new Map<string, number>();
  for (const line of out.split('\n')) {
    const m = /^\s*([\d,]+)\s+\([^)]*\)\s+(?:\S*?:)?(.+)$/.exec(line);
    if (!m) continue;
    const name = m[2]!.trim();
    if (/^0x[0-9a-f]+/.test(name)) continue;
    byName.set(name, (byName.get(name) ?? 0) + Number(m[1]!.replace(/,/g, '')));
  }
  return byName;
}

const [sa, la, sb, lb] = [a1!, a2!, b1!, b2!].map(selfByFunction) as [Map<string, number>, Map<string, number>, Map<string, number>, Map<string, number>];
const perCall = (s: Map<string, number>, l: Map<string, number>, k: string): number => ((l.get(k) ?? 0) - (s.get(k) ?? 0)) / calls;
const names = new Set([...sa.keys(), ...la.keys(), ...sb.keys(), ...lb.keys()]);
names.delete('PROGRAM TOTALS');
const rows = [...names].map((k) => ({ k, a: perCall(sa, la, k), b: perCall(sb, lb, k) })).sort((x, y) => y.a - y.b - (x.a - x.b));
const top = Number(topArg ?? 30);
const fmt = (n: number): string => Math.round(n).toLocaleString('en-US').padStart(11);
console.log(`per call over ${calls} calls: A - B, A, B, function (largest increases, then largest decreases)`);
for (const r of [...rows.slice(0, top), ...rows.slice(-Math.min(10, Math.max(0, rows.length - top)))]) console.log(`${fmt(r.a - r.b)} ${fmt(r.a)} ${fmt(r.b)}  ${r.k.slice(0, 160)}`);
